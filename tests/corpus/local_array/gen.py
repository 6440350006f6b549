import numpy as np
from corpus_util import save_in, save_exp, sx
idx = np.random.default_rng(38).integers(0, 1000, 200 * 8).astype(np.int32); save_in("idx.npy", idx)
out = []
for t in range(200):
    a = [t * 100 + k for k in range(24)]
    for k in range(8):
        j = int(idx[t * 8 + k]) % 24; a[j] = sx(a[j] + a[(j + 7) % 24] * 3, 32)
    s = 0
    for k in range(8): s = sx(s * 31 + a[int(idx[t * 8 + 7 - k]) % 24], 32)
    out.append(s)
save_exp("out.npy", np.array(out, np.int32))
