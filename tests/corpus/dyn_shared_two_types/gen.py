import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(25).integers(-1000, 1000, 192).astype(np.int32)
save_in("x.npy", x)
d = x.astype(np.float64) * 0.5; k = x.astype(np.int64) * 3
od = []; oi = []
for b in range(3):
    D, K = d[b * 64:(b + 1) * 64], k[b * 64:(b + 1) * 64]
    for t in range(64): od.append(D[63 - t] + D[t]); oi.append(K[(t + 1) % 64] - K[t])
save_exp("od.npy", np.array(od)); save_exp("oi.npy", np.array(oi, np.int32))
