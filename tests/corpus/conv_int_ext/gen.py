import numpy as np
from corpus_util import save_in, save_exp, sx
rng = np.random.default_rng(13)
N = 100
c = rng.integers(-128, 128, N).astype(np.int8); uc = rng.integers(0, 256, N).astype(np.uint8)
s = rng.integers(-2**15, 2**15, N).astype(np.int16); us = rng.integers(0, 2**16, N).astype(np.uint16)
w = rng.integers(-2**31, 2**31, N).astype(np.int32)
c[:4] = [-128, 127, -1, 0]; uc[:4] = [255, 0, 128, 127]; s[:4] = [-32768, 32767, -1, 0]; us[:4] = [65535, 0, 32768, 1]
w[:4] = [0x80, 0xff7f, -129, 0x12348000]
for n_, v in (("c", c), ("uc", uc), ("s", s), ("us", us), ("w", w)): save_in(n_ + ".npy", v)
out = []; oc = []; os_ = []
for i in range(N):
    C, UC, S, US, W = int(c[i]), int(uc[i]), int(s[i]), int(us[i]), int(w[i])
    out += [C, UC, S, US, sx(W, 8), W & 0xff, sx(W, 16), W & 0xffff, (C & 0xff) + C, sx(S * 3, 16) >> 2]
    oc.append(sx(C + UC, 8)); os_.append(sx(S + US * 2, 16))
save_exp("out.npy", np.array(out, np.int32)); save_exp("oc.npy", np.array(oc, np.int8)); save_exp("os.npy", np.array(os_, np.int16))
