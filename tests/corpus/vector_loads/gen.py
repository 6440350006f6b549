import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(45)
f4 = rng.integers(-100, 100, (128, 4)).astype(np.float32) * np.float32(0.5)
i2 = rng.integers(-10**6, 10**6, (128, 2)).astype(np.int32); u4 = rng.integers(0, 256, (128, 4)).astype(np.uint8)
s2 = rng.integers(-2**15, 2**15, (128, 2)).astype(np.int16); c4 = rng.integers(-128, 128, (128, 4)).astype(np.int8)
for nm, v in (("f4", f4), ("i2", i2), ("u4", u4), ("s2", s2), ("c4", c4)): save_in(nm + ".npy", v.reshape(-1))
of = []; oi = []
for t in range(128):
    a, b = f4[t], f4[(t + 1) & 127]
    of += [a[3] + b[0], a[2] - b[1], a[1] * np.float32(2), a[0]]
    U = [int(v) for v in u4[t]]
    oi += [int(i2[t, 0]) - int(i2[t, 1]) + int(i2[127 - t, 1]), U[0] + (U[1] << 8) + U[2] * U[3],
           int(s2[t, 0]) * int(s2[t, 1]), int(c4[t].astype(np.int64).sum())]
save_exp("of4.npy", np.array(of, np.float32)); save_exp("oi.npy", np.array(oi, np.int32))
