import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp, M32, M64
rng = np.random.default_rng(12)
N = 128
a = rng.integers(-2**31, 2**31, N).astype(np.int32)
a[:12] = [0, 1, -1, 2**31 - 1, -2**31, 16777217, -16777217, 16777219, 33554435, -33554435, 2**24, 0x7fffffc0]
l = rng.integers(-2**63, 2**63, N, dtype=np.int64)
l[:10] = [0, -1, 2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 2**53 + 3, 2**62 + 2**30 + 1, 9007199254740993, 2**24 + 1]
# doubles in the f32 normal range (f32 subnormal results would be flushed by fast-math) plus overflow
d = rng.standard_normal(N) * 2.0 ** rng.integers(-100, 100, N)
d[:12] = [0.0, -0.0, 1.0 + 2.0**-30, -(1.0 + 2.0**-30), 3.4028235677973366e38, 3.5e38, -3.5e38, 1e300,
          math.inf, math.nan, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24]
save_in("a.npy", a); save_in("l.npy", l); save_in("d.npy", d)
of = []; od = []
for v, w, g in zip(a.tolist(), l.tolist(), d.tolist()):
    uv, uw = v & M32, w & M64
    of += [F.int_to(F.F32, m, v) for m in F.MODES] + [F.int_to(F.F32, m, uv) for m in F.MODES] + \
          [F.int_to(F.F32, m, w) for m in F.MODES] + [F.int_to(F.F32, "rn", uw), F.int_to(F.F32, "rd", uw)] + \
          [F.cvt(F.F32, m, g) for m in F.MODES] + [F.int_to(F.F32, "rn", v), F.cvt(F.F32, "rn", g)]
    od += [F.int_to(F.F64, m, w) for m in F.MODES] + [F.int_to(F.F64, "rd", uw), F.int_to(F.F64, "rn", v)]
save_exp("of.npy", np.array(of, np.uint32).view(np.float32)); save_exp("od.npy", np.array(od, np.uint64).view(np.float64))
