import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(10)
inf, nan, DM, DS = math.inf, math.nan, 1.7976931348623157e308, 5e-324
rows = [(1.0, 2.0**-53, 0.0), (1.0, -2.0**-53, 0.0), (-1.0, 2.0**-54, 0.0), (1.0, 3.0, 1.0), (-1.0, 3.0, -1.0),
        (2.0, -2.0, 0.0), (0.0, -0.0, -0.0), (-0.0, -0.0, 0.0), (inf, -inf, 1.0), (nan, 1.0, 1.0), (2.0, 3.0, nan),
        (3.0, DM, DM), (-3.0, DM, -DM), (DS, 0.5, DS), (DS, 0.75, 0.0), (-DS, 0.5, -0.0), (2.0**-1022, -DS, 0.0),
        (2.0**-1000, 2.0**-60, 2.0**-1074), (2.0**-1074, 2.0**1023, 0.0), (2.0**1023, 2.0**-1060, 1.0),
        (-4.0, 2.0, 8.0), (0.1, 0.3, -0.03), (2.0, 0.0, 1.0), (-0.0, 7.0, -0.0), (2.0**-1070, 3.0, 2.0**-1074)]
while len(rows) < 200:
    k = rng.integers(0, 3)
    e = (-1070, -1000) if k == 0 else (-60, 60)
    v = [float(rng.standard_normal() * 2.0 ** int(rng.integers(*e))) for _ in range(3)]
    if k == 2: v[1] = float(2.0 ** int(rng.integers(900, 1020)) * rng.random())
    if rng.random() < 0.2: v[2] = -v[0] * v[1]
    rows.append(tuple(v))
for i, nm in enumerate("xyz"): save_in(nm + ".npy", np.array([r[i] for r in rows], np.float64))
out = []
for a, b, c in rows:
    for f in (lambda m: F.add(F.F64, m, a, b), lambda m: F.mul(F.F64, m, a, b), lambda m: F.fma(F.F64, m, a, b, c),
              lambda m: F.div(F.F64, m, a, b), lambda m: F.sqrt(F.F64, m, a), lambda m: F.rcp(F.F64, m, a)):
        for m in ("rn", "rz", "rd", "ru"): out.append(f(m))
save_exp("out.npy", np.array(out, np.uint64).view(np.float64))
