import numpy as np
from corpus_util import save_in, save_exp
from shflref import shfl, cval
rng = np.random.default_rng(27)
N = 64
x = rng.integers(-10**6, 10**6, N).astype(np.int32)
sel = rng.integers(0, 40, N).astype(np.int32)
sel[:8] = [0, 1, 31, 32, 33, 39, 7, 16]
save_in("x.npy", x); save_in("sel.npy", sel)
out = []
for t in range(N):
    w0 = (t // 32) * 32; vals = [int(v) for v in x[w0:w0 + 32]]; lane = t - w0; s = int(sel[t])
    # CUDA intrinsics pass the operand as a 32-bit value; negative deltas are huge unsigned numbers
    b = s & 0xffffffff
    bs = s  # for up the PTX comparison is signed: j = lane - b with b as unsigned 32-bit
    o = []
    for mode in ("idx", "up", "down", "bfly"):
        for w in (4, 8, 16, 32):
            bb = b if mode != "up" else b
            j_b = bb if bb < 2**31 else bb - 2**32   # treat as signed for arithmetic
            o.append(shfl(mode, vals, lane, j_b if mode in ("up", "down") else bb, cval(mode, w))[0])
    for mode, c in (("up", 0x1800), ("down", 0x181f), ("bfly", 0x101f), ("idx", 0x0c13)):
        j_b = b if b < 2**31 else b - 2**32
        r, p = shfl(mode, vals, lane, j_b if mode in ("up", "down") else b, c)
        o += [r, int(p)]
    out += o
save_exp("out.npy", np.array(out, np.int32))
