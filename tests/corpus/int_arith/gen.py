import numpy as np
from corpus_util import save_in, save_exp, sx, M32, M64
rng = np.random.default_rng(3)
N = 200
I32 = lambda n: rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
a, b, c = I32(N), I32(N), I32(N)
edge = [0, 1, -1, 2**31 - 1, -2**31, 0x7fffff, -0x800000, 0xffffff, 0x1000000, 12345]
a[:10] = edge; b[:10] = edge[::-1]; c[:10] = [-1, 0, 5, -7, 2**31 - 1, 3, 9, -2**31, 100, 0]
a[10:30] = rng.integers(-3000, 3000, 20); b[10:30] = rng.integers(-3000, 3000, 20)
la = rng.integers(-2**63, 2**63, N, dtype=np.int64); lb = rng.integers(-2**63, 2**63, N, dtype=np.int64)
la[:4] = [-2**63, 2**63 - 1, -1, 0]; lb[:4] = [-2**63, -1, 2**63 - 1, -1]
for n_, v in (("a", a), ("b", b), ("c", c), ("la", la), ("lb", lb)): save_in(n_ + ".npy", v)
out = []; out64 = []
for i in range(N):
    x, y, z = int(a[i]), int(b[i]), int(c[i]); ux, uy, uz = x & M32, y & M32, z & M32
    out += [(x * y) >> 32, (ux * uy) >> 32,
            sx(x, 24) * sx(y, 24), (ux & 0xffffff) * (uy & 0xffffff),
            abs(x - y) + uz, abs(ux - uy) + uz,
            abs(x), min(x, y), max(x, y), min(ux, uy), max(ux, uy),
            ux * uy + uz, (x * 1000003) >> 32, ux * 0x9E3779B9,
            (x + y) >> 1, (ux + uy + 1) >> 1]
    X, Y = int(la[i]), int(lb[i])
    out64 += [x * y, ux * uy, (X * Y) >> 64, ((X & M64) * (Y & M64)) >> 64]
save_exp("out.npy", np.array([v & M32 for v in out], dtype=np.uint32))
save_exp("out64.npy", np.array([v & M64 for v in out64], dtype=np.uint64))
