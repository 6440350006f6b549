import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(37).integers(-10**5, 10**5, 1200).astype(np.int32); save_in("x.npy", x)
save_exp("partial.npy", np.array([x[b * 128:(b + 1) * 128].sum() for b in range(10)], np.int32))
save_exp("total.npy", np.array([x.sum()], np.int32)); save_exp("counter.npy", np.zeros(1, np.uint32))
