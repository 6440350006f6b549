import numpy as np
from corpus_util import save_in, save_exp, M32, M64
rng = np.random.default_rng(6)
N = 160
x = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
y = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
s = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
s[:64] = np.arange(64)  # shift amounts 0..63 (clamp vs wrap)
X = rng.integers(0, 2**64, N, dtype=np.uint64)
x[:6] = [0, 1, 0x80000000, 0xffffffff, 0x00010000, 0x12345678]
X[:6] = [0, 1, 2**63, 2**64 - 1, 2**32, 0x0000000100000000]
X[6:38] = [1 << k for k in range(0, 64, 2)]
for n_, v in (("x", x), ("y", y), ("s", s), ("X", X)): save_in(n_ + ".npy", v)
def brev(v, w): return int(format(v, "0%db" % w)[::-1], 2)
def clz(v, w): return w - v.bit_length()
def ffs(v): return (v & -v).bit_length()
def byte_perm(a, b, sel):
    full = a | (b << 32); r = 0
    for k in range(4):
        idx = (sel >> (4 * k)) & 7
        r |= ((full >> (8 * idx)) & 0xff) << (8 * k)
    return r
out = []; out64 = []
for i in range(N):
    a, b, c, L = int(x[i]), int(y[i]), int(s[i]), int(X[i])
    hl = (b << 32) | a
    sw, scl = c & 31, min(c, 32)
    rot = c & 31
    out += [brev(a, 32), clz(a, 32), bin(a).count("1"), ffs(a), byte_perm(a, b, c & 0x7777),
            ((hl << sw) >> 32) & M32, (hl >> sw) & M32, ((hl << scl) >> 32) & M32, (hl >> scl) & M32,
            clz(L, 64), bin(L).count("1"), ffs(L), ((a >> rot) | (a << ((32 - rot) & 31))) & M32]
    out64.append(brev(L, 64))
save_exp("out.npy", np.array(out, dtype=np.uint32)); save_exp("out64.npy", np.array(out64, dtype=np.uint64))
