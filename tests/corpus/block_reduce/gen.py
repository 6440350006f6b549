import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(21).integers(-1000, 1000, 1000).astype(np.int32)
save_in("x.npy", x)
save_exp("sums.npy", np.array([x[k * 128:(k + 1) * 128].sum() for k in range(8)], np.int32))
