import numpy as np
from corpus_util import save_in, save_exp, M32
rng = np.random.default_rng(7)
N = 200
U = lambda n: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
x, y, z = U(N), U(N), U(N)
# b holds pos (low byte) and for bfi also len (second byte); z holds len for bfe
y[:100] = rng.integers(0, 40, 100) | (rng.integers(0, 40, 100) << 8) | (rng.integers(0, 2**16, 100) << 16)
z[:100] = rng.integers(0, 40, 100) | (rng.integers(0, 2**24, 100) << 8)
y[100:140] = rng.integers(0, 70, 40)   # shift counts for shf, both < and > 32
z[100:140] = rng.integers(0, 70, 40)
x[:8] = [0, 0xffffffff, 0x80000000, 1, 0x7fffffff, 0xfffffffe, 0x00008000, 0xff00ff00]
z[:8] = [0, 0xfffffffe, 0x00000001, 0, 5, 0x10, 0, 0x40]
for n_, v in (("x", x), ("y", y), ("z", z)): save_in(n_ + ".npy", v)
bit = lambda v, k: (v >> k) & 1
def bfe(a, b, c, signed):
    pos, ln = b & 0xff, c & 0xff
    sbit = 0 if (not signed or ln == 0) else bit(a, min(pos + ln - 1, 31))
    return sum(((bit(a, pos + k) if (k < ln and pos + k <= 31) else sbit) << k) for k in range(32))
def bfi(f, base, pos, ln):
    pos &= 0xff; ln &= 0xff; r = base
    k = 0
    while k < ln and pos + k <= 31:
        r = (r & ~(1 << (pos + k))) | (bit(f, k) << (pos + k)); k += 1
    return r & M32
def bfind_u(a): return a.bit_length() - 1 if a else M32
def bfind_s(a):
    if a >> 31: a = (~a) & M32
    return a.bit_length() - 1 if a else M32
def shamt(p): return M32 if p == M32 else 31 - p
def shf(a, b, c, left, clamp):
    n = min(c, 32) if clamp else c & 31
    v = (b << 32) | a
    return ((v << n) >> 32) & M32 if left else (v >> n) & M32
def prmt(a, b, c, mode):
    bs = [((a | (b << 32)) >> (8 * k)) & 0xff for k in range(8)]
    if mode is None:
        r = 0
        for k in range(4):
            sel = (c >> (4 * k)) & 0xf
            byte = bs[sel & 7]
            if sel & 8: byte = 0xff if byte & 0x80 else 0
            r |= byte << (8 * k)
        return r
    tbl = {"f4e": [[0,1,2,3],[1,2,3,4],[2,3,4,5],[3,4,5,6]],
           "b4e": [[0,7,6,5],[1,0,7,6],[2,1,0,7],[3,2,1,0]],
           "rc8": [[0]*4,[1]*4,[2]*4,[3]*4],
           "ecl": [[0,1,2,3],[1,1,2,3],[2,2,2,3],[3,3,3,3]],
           "ecr": [[0,0,0,0],[0,1,1,1],[0,1,2,2],[0,1,2,3]],
           "rc16": [[0,1,0,1],[2,3,2,3],[0,1,0,1],[2,3,2,3]]}[mode][c & 3]  # listed d.b0..d.b3
    return sum(bs[tbl[k]] << (8 * k) for k in range(4))
def lop3(a, b, c, lut):
    return sum(bit(lut, (bit(a, k) << 2) | (bit(b, k) << 1) | bit(c, k)) << k for k in range(32))
out = []
for i in range(N):
    a, b, c = int(x[i]), int(y[i]), int(z[i])
    out += [bfe(a, b, c, False), bfe(a, b, c, True), bfi(a, c, b, b >> 8),
            bfind_u(a), bfind_s(a), shamt(bfind_u(a)),
            shf(a, b, c, True, False), shf(a, b, c, True, True), shf(a, b, c, False, False), shf(a, b, c, False, True),
            prmt(a, b, c, None), prmt(a, b, c, "f4e"), prmt(a, b, c, "b4e"), prmt(a, b, c, "rc8"),
            prmt(a, b, c, "ecl"), prmt(a, b, c, "ecr"), prmt(a, b, c, "rc16"),
            lop3(a, b, c, 0x96), lop3(a, b, c, 0xE8), lop3(a, b, c, 0xCA), lop3(a, b, c, 0x1E),
            (~a) & M32, 1 if (a & c) == 0 else 0, shamt(bfind_s(a))]
save_exp("out.npy", np.array(out, dtype=np.uint32))
