import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(29)
x = rng.integers(-1000, 1000, 128).astype(np.int32)
x[64:96] = np.abs(x[64:96]) + 1   # warp 2 all positive
save_in("x.npy", x)
out = []
M = 0x49249249
for t in range(128):
    w0, lane = (t // 32) * 32, t % 32
    ws = [int(v) for v in x[w0:w0 + 32]]
    mask = M if lane % 3 == 0 else (~M) & 0xffffffff
    mem = [l for l in range(32) if mask >> l & 1]
    out += [sum(1 << l for l in range(32) if ws[l] > 0), sum(1 << l for l in mem if ws[l] > 0),
            int(any(ws[l] > 500 for l in mem)), int(all(ws[l] > -900 for l in mem)), mask]
save_exp("out.npy", np.array(out, np.uint32))
