import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(77)
x = rng.integers(0, 1000, 32).astype(np.int32)
save_in("x.npy", x)
M = 0x49249249
ballot = sum(1 << l for l in range(32) if (M >> l) & 1 and x[l] & 1)
odd = bin((~M) & 0xffffffff).count("1")
a = [ballot if l % 3 == 0 else odd for l in range(32)] + [int(x.max())] * 32
save_exp("a.npy", np.array(a, np.uint32))
b = [int(x[3]) if l < 16 else int(x[l ^ 1]) for l in range(32)] + [int(x[0])] * 32
save_exp("b.npy", np.array(b, np.uint32))
