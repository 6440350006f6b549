import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(35)
x = rng.integers(-1000, 1000, 512).astype(np.float32); d = rng.integers(-2**40, 2**40, 512).astype(np.float64)
save_in("x.npy", x); save_in("d.npy", d)
fs = [x.sum()] + [2 * x[b * 128:(b + 1) * 128].sum() for b in range(4)]
ds = [float(sum(int(v) for v in d))] + [sum(int(v) for v in d[k::4]) / 4 for k in range(4)]
save_exp("fs.npy", np.array(fs, np.float32)); save_exp("ds.npy", np.array(ds, np.float64))
