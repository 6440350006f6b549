import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(2024)
n = 100
x = rng.standard_normal(n).astype(np.float32)
sel = rng.integers(0, 3, n).astype(np.int32)
f = [lambda t: t * t, lambda t: -t, lambda t: t * np.float32(0.5)]
save_in("x.npy", x); save_in("sel.npy", sel)
save_exp("y_global.npy", np.array([f[i % 3](x[i]) for i in range(n)], np.float32))
save_exp("y_local.npy", np.array([f[sel[i]](x[i]) for i in range(n)], np.float32))
