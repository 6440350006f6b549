import numpy as np
from corpus_util import save_in, save_exp
x = np.random.default_rng(28).integers(-1000, 1000, 64).astype(np.int32); save_in("x.npy", x)
out = []; masks = []
for t in range(64):
    w0, lane = (t // 32) * 32, t % 32
    if lane < 20: out.append(x[w0 + (lane * 7 + 3) % 20]); masks.append(0x000fffff)
    else: out.append(x[t + 2] if lane + 2 <= 31 else x[t]); masks.append(0xfff00000)
save_exp("out.npy", np.array(out, np.int32)); save_exp("masks.npy", np.array(masks, np.uint32))
