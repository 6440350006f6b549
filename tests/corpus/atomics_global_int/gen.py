import numpy as np
from functools import reduce
from corpus_util import save_in, save_exp, M32, M64, sx
n = 512
x = np.random.default_rng(33).integers(-2**31, 2**31, n).astype(np.int32); save_in("x.npy", x)
acc0 = np.array([0, 1000, 2**31 - 1, -2**31, -1, 0, 0x5a5a5a5a, 0, 0, 0, 0, 7], np.int32)
uacc0 = np.array([0xffffffff, 0, 0, 7, 5], np.uint32)
lacc0 = np.array([1, 0, 0], np.int64); ulacc0 = np.array([0, 0, 0, 9], np.uint64)
save_in("acc.npy", acc0); save_in("uacc.npy", uacc0); save_in("lacc.npy", lacc0); save_in("ulacc.npy", ulacc0)
X = [int(v) for v in x]; U = [v & M32 for v in X]
acc = [n, sx(1000 - sum(X), 32), min(X), max(X),
       reduce(lambda a, t: a & ((~(1 << (t & 31)) | X[t]) & M32), range(n), 0xffffffff),
       reduce(lambda a, v: a | (v & 0x0f0f0f0f), U, 0), reduce(lambda a, v: a ^ v, U, 0x5a5a5a5a), 42, 42, 42, 42, 7]
acc = [sx(v & M32, 32) for v in acc]
uacc = [min(U), max(U), n % 101, (7 - n) % 51, 5 + 3 * n]
l = [1 + sum(v * 100000 for v in X), min(v * -3000000000 for v in X), max(v * -3000000000 for v in X)]
lx = reduce(lambda a, v: a ^ ((v << 20) & M64), X, 0)
ul = [0xffffffff * n, reduce(lambda a, t: a | (1 << (t & 63)), range(n), 0), lx, 9 + 0x100000001 * n]
save_exp("acc.npy", np.array(acc, np.int32)); save_exp("uacc.npy", np.array(uacc, np.uint32))
save_exp("lacc.npy", np.array([sx(v & M64, 64) for v in l], np.int64)); save_exp("ulacc.npy", np.array([v & M64 for v in ul], np.uint64))
save_exp("seen.npy", np.ones(n, np.int32))
