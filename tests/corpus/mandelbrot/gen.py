import numpy as np
from corpus_util import save_exp
f = np.float32
W, H, M = 64, 48, 64
out = np.zeros(W * H, np.int32)
with np.errstate(all="ignore"):
    for py in range(H):
        for px in range(W):
            cx = f(-2.0) + f(px) * f(3.0 / 64.0); cy = f(-1.25) + f(py) * f(2.5 / 64.0)
            x = y = f(0); it = 0
            while it < M and f(x * x) + f(y * y) <= f(4):
                xt = f(f(x * x) - f(y * y)) + cx
                y = f(f(2) * f(x * y)) + cy
                x = xt; it += 1
            out[py * W + px] = it
save_exp("out.npy", out)
