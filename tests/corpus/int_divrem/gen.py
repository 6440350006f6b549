import numpy as np
from corpus_util import save_in, save_exp, sx, tdiv, trem, M32, M64
rng = np.random.default_rng(4)
N = 256
a = rng.integers(-2**31, 2**31, N).astype(np.int32)
b = rng.integers(-2**31, 2**31, N).astype(np.int32)
a[:64] = rng.integers(-200, 200, 64); b[:64] = rng.integers(-13, 14, 64)
b[64:128] = rng.integers(-70000, 70000, 64)
edge_a = [-2**31, 2**31 - 1, -1, 0, 7, -7, 6, -6, 15, -15, 16, -16, -17, 2**31 - 1, -2**31, 1]
edge_b = [1, -1, -2**31, 5, -2, -2, 2**31 - 1, -3, 4, 4, -4, -4, 3, -2**31, 2**31 - 1, -2**31]
a[128:144] = edge_a; b[128:144] = edge_b
b[b == 0] = 3
la = rng.integers(-2**63, 2**63, N, dtype=np.int64); lb = rng.integers(-2**63, 2**63, N, dtype=np.int64)
la[:64] = rng.integers(-10**12, 10**12, 64); lb[:64] = rng.integers(-10**6, 10**6, 64)
lb[64:128] = rng.integers(-2**33, 2**33, 64)
la[128:134] = [-2**63, 2**63 - 1, -5, 5, -2**63, 0]; lb[128:134] = [1, -1, 3, -3, 2**63 - 1, -9]
lb[lb == 0] = 11
for n_, v in (("a", a), ("b", b), ("la", la), ("lb", lb)): save_in(n_ + ".npy", v)
o32 = []; o64 = []
for i in range(N):
    x, y = int(a[i]), int(b[i]); ux, uy = x & M32, y & M32
    assert not (x == -2**31 and y == -1)
    o32 += [tdiv(x, y), trem(x, y), tdiv(x, 7), trem(x, 7), tdiv(x, -3), trem(x, -3), tdiv(x, 16), trem(x, 16),
            ux // uy, ux % uy, ux // 10, ux % 10, ux // 0x80000001, tdiv(x, -2147483647)]
    X, Y = int(la[i]), int(lb[i]); uX, uY = X & M64, Y & M64
    assert not (X == -2**63 and Y == -1)
    o64 += [tdiv(X, Y), trem(X, Y), tdiv(X, -1000000007), trem(X, -1000000007), uX // uY, uX % uY]
save_exp("o32.npy", np.array([sx(v, 32) for v in o32], dtype=np.int32))
save_exp("o64.npy", np.array([sx(v, 64) for v in o64], dtype=np.int64))
