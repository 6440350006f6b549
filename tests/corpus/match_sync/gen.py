import numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(30)
k = rng.integers(0, 5, 64).astype(np.int32); k[32:] += 2000   # warp 1: keys//1000 all equal 2; warp 0: all 0
k[40] = 3000                                                   # ...except lane 8 of warp 1
lk = (rng.integers(0, 3, 64).astype(np.int64) << 40) + 7
save_in("keys.npy", k); save_in("lkeys.npy", lk)
out = []
for t in range(64):
    w0 = (t // 32) * 32
    ks = [int(v) for v in k[w0:w0 + 32]]; ls = [int(v) for v in lk[w0:w0 + 32]]; lane = t - w0
    ma = sum(1 << l for l in range(32) if ks[l] == ks[lane]); ml = sum(1 << l for l in range(32) if ls[l] == ls[lane])
    allq = len(set(v // 1000 for v in ks)) == 1
    out += [ma, ml, 0xffffffff if allq else 0, int(allq)]
save_exp("out.npy", np.array(out, np.uint32))
