import numpy as np
from corpus_util import save_in, save_exp
g = np.random.default_rng(46).integers(-100, 100, 256).astype(np.int32); save_in("g.npy", g)
out = []; g2 = g.copy()
for t in range(64):
    if t & 1: vals = [t * 10 + k for k in range(4)]
    else: vals = [int(v) for v in g[t * 4:t * 4 + 4]]; g2[t * 4:t * 4 + 4] += 5
    a = sum(v + 5 for v in vals); b = sum(t + k + t for k in range(4))
    out += [a, b, (t * 10 + 3 + (5 if t & 1 else 0)) + (1000 if t & 1 else 2000)]
save_exp("out.npy", np.array(out, np.int32)); save_exp("g.npy", g2)
