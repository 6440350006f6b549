import numpy as np
from corpus_util import save_in, save_exp
d = np.random.default_rng(34).integers(0, 256, 5000).astype(np.uint8); d[:500] = 7
save_in("data.npy", d); save_exp("hist.npy", np.bincount(d & 63, minlength=64).astype(np.uint32))
