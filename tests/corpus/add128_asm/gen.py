import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(5)
N = 100
a = rng.integers(0, 2**32, (N, 4), dtype=np.uint64).astype(np.uint32)
b = rng.integers(0, 2**32, (N, 4), dtype=np.uint64).astype(np.uint32)
F = 0xffffffff
a[0] = [F, F, F, F]; b[0] = [1, 0, 0, 0]
a[1] = [F, F, 0, 0]; b[1] = [1, 0, 0, 0]
a[2] = [0, 0, 0, 0]; b[2] = [1, 0, 0, 0]
a[3] = [0, 0, 1, 0]; b[3] = [1, 0, 0, 0]
a[4] = [F, F, F, F]; b[4] = [F, F, F, F]
a[5] = [F, 0, F, 0]; b[5] = [1, F, 0, F]
save_in("a.npy", a.reshape(-1)); save_in("b.npy", b.reshape(-1))
val = lambda w: sum(int(w[k]) << (32 * k) for k in range(4))
def words(v): return [(v >> (32 * k)) & F for k in range(4)]
M = (1 << 128) - 1
s, d, p = [], [], []
for i in range(N):
    A, B = val(a[i]), val(b[i])
    s += words((A + B) & M); d += words((A - B) & M)
    p += words((A & (2**64 - 1)) * (B & (2**64 - 1)))
for n_, v in (("sum", s), ("diff", d), ("prod", p)): save_exp(n_ + ".npy", np.array(v, dtype=np.uint32))
