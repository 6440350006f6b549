import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(43)
M, N, K = 40, 36, 50
A = rng.integers(-8, 9, (M, K)).astype(np.float32); B = rng.integers(-8, 9, (K, N)).astype(np.float32)
save_in("A.npy", A.reshape(-1)); save_in("B.npy", B.reshape(-1))
save_exp("C.npy", (A.astype(np.int64) @ B.astype(np.int64)).astype(np.float32).reshape(-1))
