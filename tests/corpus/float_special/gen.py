import math, itertools, numpy as np, fpref as F
from corpus_util import save_in, save_exp
nan, inf = math.nan, math.inf
vals = [nan, -inf, -3e38, -1.5, -0.0, 0.0, 0.5, 2.0, 3e38, inf]
pairs = [(a, b) for a, b in itertools.product(vals, vals) if not (a == 0 and b == 0 and math.copysign(1, a) != math.copysign(1, b))]
cvals = [0.25, -2.0, 1.5, nan, inf, -inf, 0.0, 0.75, -0.5, 3.0]
svals = [1e-40, -1e-40, 2.0**-149, 2.0**-126, 3.0, -2.0**-130, 2.0**-100, 1e-45, 0.0, -1.0]
tvals = [2.0**-30, 2.0**100, 0.5, -1e-39, -2.0**-20, 2.0**60, 5e-39, 2.0**10, -2.0**-120, 7.0]
N = len(pairs)
x = np.array([a for a, b in pairs], np.float32); y = np.array([b for a, b in pairs], np.float32)
z = np.array([cvals[k % 10] for k in range(N)], np.float32)
s = np.array([svals[k % 10] for k in range(N)], np.float32); t = np.array([tvals[(k // 10) % 10] for k in range(N)], np.float32)
for nm, v in (("x", x), ("y", y), ("z", z), ("s", s), ("t", t)): save_in(nm + ".npy", v)
B = lambda bits: F.bits_f32(bits)
ftz = F.ftz32
def fmin(a, b):
    if math.isnan(a): return b
    if math.isnan(b): return a
    return min(a, b)
def fmax(a, b):
    if math.isnan(a): return b
    if math.isnan(b): return a
    return max(a, b)
def sat(v):
    if math.isnan(v): return 0.0
    return min(max(v, 0.0), 1.0)
out = []
for i in range(N):
    a, b, c, S, T = (float(v[i]) for v in (x, y, z, s, t))
    fs, ft = ftz(S), ftz(T)
    m_ftz = ftz(B(F.mul(F.F32, "rn", fs, ft))); a_ftz = ftz(B(F.add(F.F32, "rn", fs, ft)))
    fma_ftz = ftz(B(F.fma(F.F32, "rn", fs, ft, fs)))
    for ex in (F.mul(F.F64, "rn", fs, ft), F.fma(F.F64, "rn", fs, ft, fs)):   # keep away from the flush boundary
        v = abs(F.bits_f64(ex)); assert not (2.0**-126 * (1 - 2.0**-20) < v < 2.0**-126)
    out += [B(F.add(F.F32, "rn", a, b)), B(F.mul(F.F32, "rn", a, b)), B(F.fma(F.F32, "rn", a, b, c)), fmin(a, b), fmax(a, b),
            sat(c), math.copysign(a, b) if not math.isnan(a) else a, abs(a), -a, sat(B(F.add(F.F32, "rn", c, b))),
            m_ftz, a_ftz, B(F.mul(F.F32, "rn", S, T)), B(F.add(F.F32, "rn", S, T)), fma_ftz, fmax(S, T)]
arr = np.array(out, np.float32)
save_exp("out.npy", arr)
