import numpy as np
from corpus_util import save_in, save_exp
n = 300
x = np.random.default_rng(48).integers(-1000, 1000, n).astype(np.int32); save_in("x.npy", x)
out = []
for i in range(n):
    b, t = divmod(i, 128); lim = min(128, n - b * 128)
    out.append(x[i] + x[b * 128 + (t + 1) % lim])
save_exp("out.npy", np.array(out, np.int32))
