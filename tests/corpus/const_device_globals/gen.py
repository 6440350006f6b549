import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(42).integers(0, 1000, 64).astype(np.int32); save_in("x.npy", x)
c = [3, 1, 4, 1, 5, 9, 2, 6]; g = list(range(1, 17))
out = [c[int(v) & 7] * g[t & 15] for t, v in enumerate(x)] + [g[k] + 4 for k in range(16)]
save_exp("out.npy", np.array(out, np.int32)); save_exp("od.npy", x.astype(np.float64) * 0.125)
save_exp("oc.npy", np.array([1000 + 128], np.uint64))
