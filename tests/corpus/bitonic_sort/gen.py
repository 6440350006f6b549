import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(44).integers(-10000, 10000, 512).astype(np.int32); x[:20] = 5
save_in("x.npy", x); save_exp("sorted.npy", np.concatenate([np.sort(x[:256]), np.sort(x[256:])]).astype(np.int32))
