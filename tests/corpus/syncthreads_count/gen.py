import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(47).integers(-1000, 1000, 480).astype(np.int32)
x[160:320] = np.clip(x[160:320], -800, 900)
save_in("x.npy", x); out = []
for b in range(3):
    v = x[b * 160:(b + 1) * 160]; out += [int((v > 0).sum()), int((v > -900).all()), int((v > 990).any())]
save_exp("out.npy", np.array(out, np.int32))
