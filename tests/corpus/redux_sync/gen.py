import numpy as np
from functools import reduce
from corpus_util import save_in, save_exp, M32
x = np.random.default_rng(31).integers(-2**31, 2**31, 64).astype(np.int32); x[5] = -1; x[40] = 0
save_in("x.npy", x)
out = []
for t in range(64):
    w0 = (t // 32) * 32; s = [int(v) for v in x[w0:w0 + 32]]; u = [v & M32 for v in s]; lane = t - w0
    out += [sum(u) & M32, min(u), max(u), min(s) & M32, max(s) & M32, reduce(lambda a, b: a & b, u),
            reduce(lambda a, b: a | b, u), reduce(lambda a, b: a ^ b, u),
            (sum(u[:16]) & M32) if lane < 16 else (max(s[16:]) & M32)]
save_exp("out.npy", np.array(out, np.uint32))
