import numpy as np
from corpus_util import save_in, save_exp
nz, ny, nx = 7, 10, 19
a = np.random.default_rng(24).integers(-100, 100, (nz, ny, nx)).astype(np.int32)
save_in("a.npy", a.reshape(-1))
o = a.copy()
c = a[1:-1, 1:-1, 1:-1]
o[1:-1, 1:-1, 1:-1] = 6 * c - a[1:-1, 1:-1, :-2] - a[1:-1, 1:-1, 2:] - a[1:-1, :-2, 1:-1] - a[1:-1, 2:, 1:-1] - a[:-2, 1:-1, 1:-1] - a[2:, 1:-1, 1:-1]
save_exp("o.npy", o.reshape(-1))
