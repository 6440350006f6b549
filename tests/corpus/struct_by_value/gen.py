import struct, numpy as np
from corpus_util import save_in, save_exp
flag, scale, bias, shift, mul, add = 1, -7, 0.5, 3, [1.5, -2.25, 8.0], -123456789012
raw = struct.pack("<b3xidh2x3fq", flag, scale, bias, shift, *mul, add)
assert len(raw) == 40
with open("inputs/params.bin", "wb") as f: f.write(raw)
x = np.random.default_rng(41).integers(-1000, 1000, 32).astype(np.int32); save_in("x.npy", x)
out = [(int(x[t]) * scale + bias + float(np.float32(mul[t % 3]))) * (1 if flag else -1) for t in range(32)]
save_exp("out.npy", np.array(out)); save_exp("out2.npy", np.array([(int(x[t]) << shift) + add for t in range(32)], np.int64))
