import numpy as np
from corpus_util import save_in, save_exp
a = np.random.default_rng(23).standard_normal((45, 70)).astype(np.float32)
save_in("a.npy", a.reshape(-1)); save_exp("t.npy", a.T.copy().reshape(-1))
