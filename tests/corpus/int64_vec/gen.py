import numpy as np
from corpus_util import save_in, save_exp, sx, M64
rng = np.random.default_rng(2)
N = 300
a = rng.integers(-2**63, 2**63, N, dtype=np.int64)
b = rng.integers(-2**63, 2**63, N, dtype=np.int64)
edge = [0, 1, -1, 2**63 - 1, -2**63, 12345678901234, -98765432109876, 63, 64, 65]
a[:len(edge)] = edge; b[:len(edge)] = edge[::-1]
a[20:40] = rng.integers(-1000, 1000, 20); b[20:40] = rng.integers(0, 70, 20)
save_in("a.npy", a); save_in("b.npy", b)
out = []; uout = []
for x, y in zip(a.tolist(), b.tolist()):
    s = y & 63; ux = x & M64; uy = y & M64
    out += [sx(ux + uy, 64), sx(ux - uy, 64), sx(ux * uy, 64), x >> s, sx(ux << s, 64), x ^ y, x & ~y, min(x, y)]
    d = uy | 1
    uout += [ux >> s, (ux * uy) & M64, ux // d, ux % d]
save_exp("out.npy", np.array(out, dtype=np.int64)); save_exp("uout.npy", np.array(uout, dtype=np.uint64))
