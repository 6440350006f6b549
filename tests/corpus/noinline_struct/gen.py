import numpy as np
from corpus_util import save_in, save_exp, sx
x = np.random.default_rng(39).integers(-5000, 5000, 66).astype(np.int32); save_in("x.npy", x)
oi = []; ol = []; of = []; od = []
for t in range(64):
    a, b, d = int(x[t]), int(x[t + 1]), int(x[t + 2]) * 1000
    s = a + b + t
    oi += [s, sx(sx(t * 257, 16) ^ t, 16), int(a * 2.0) - t]
    ol.append(a * b * d); of.append(np.float32(s) * np.float32(0.25)); od.append(b * 0.5 + t)
save_exp("oi.npy", np.array(oi, np.int32)); save_exp("ol.npy", np.array(ol, np.int64))
save_exp("of.npy", np.array(of, np.float32)); save_exp("od.npy", np.array(od, np.float64))
