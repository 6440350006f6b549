import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(9)
def sub():  # random subnormal or near-subnormal f32
    e = int(rng.integers(-149, -110))
    return float(np.float32(math.ldexp(float(rng.random() + 0.5), e) * (1 if rng.random() < 0.5 else -1)))
rows = [(2.0**-149, 2.0**-149, 0.0), (2.0**-126, -2.0**-149, 0.0), (2.0**-149, 0.5, 2.0**-149), (2.0**-149, 0.75, 0.0),
        (-2.0**-149, 0.5, -0.0), (2.0**-149, -2.0**-149, 0.0), (1.5 * 2.0**-126, 2.0**-24, 2.0**-149),
        (2.0**-140, 2.0**20, -2.0**-140), (2.0**126, 4.0, 2.0**-149), (2.0**-149, 2.0**127, 0.0),
        (2.0**-130, 3.0, 2.0**-149), (2.0**127, 2.0**-130, 1.0)]
while len(rows) < 160:
    k = rng.integers(0, 4)
    a = sub(); b = sub() if k == 0 else float(np.float32(rng.standard_normal() * 2.0**rng.integers(-20, 21)))
    c = sub() if k < 2 else float(np.float32(rng.standard_normal() * 2.0**-120))
    if k == 3: b = float(np.float32(2.0 ** rng.integers(100, 127) * (rng.random() + 0.5)))
    rows.append((abs(a) if rng.random() < 0.3 else a, b, c))
x = np.array([r[0] for r in rows], np.float32); y = np.array([r[1] for r in rows], np.float32); z = np.array([r[2] for r in rows], np.float32)
assert all(float(x[i]) == rows[i][0] and float(y[i]) == rows[i][1] for i in range(len(rows)))
save_in("x.npy", x); save_in("y.npy", y); save_in("z.npy", z)
out = []
for a, b, c in rows:
    for f in (lambda m: F.add(F.F32, m, a, b), lambda m: F.mul(F.F32, m, a, b), lambda m: F.fma(F.F32, m, a, b, c),
              lambda m: F.div(F.F32, m, a, b), lambda m: F.sqrt(F.F32, m, a), lambda m: F.rcp(F.F32, m, a)):
        for m in ("rn", "rz", "rd", "ru"): out.append(f(m))
save_exp("out.npy", np.array(out, np.uint32).view(np.float32))
