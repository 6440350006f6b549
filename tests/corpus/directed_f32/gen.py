import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(8)
inf, nan, FM = math.inf, math.nan, F.bits_f32(0x7f7fffff)
special = [
    (1.0, 2.0**-24, 0.0), (1.0, -2.0**-24, 0.0), (-1.0, 2.0**-25, 0.0), (1.0, 3.0, 1.0), (-1.0, 3.0, -1.0),
    (2.0, -2.0, 0.0), (-2.0, 2.0, -0.0), (0.0, -0.0, -0.0), (-0.0, -0.0, 0.0), (-0.0, 0.0, -0.0),
    (inf, -inf, 1.0), (inf, 1.0, -inf), (-inf, 0.0, 1.0), (nan, 1.0, 1.0), (1.0, nan, 2.0), (2.0, 3.0, nan),
    (2.0**100, 2.0**-30, -1.0), (-2.0**100, 2.0**-30, 1.0), (2.0**100, 2.0**90, 2.0**100), (-2.0**100, 2.0**90, 0.0),
    (2.0**120, -2.0**-10, 0.0), (3.0, FM, FM), (-3.0, FM, -FM), (1.5, FM, -FM), (-0.0, 5.0, -0.0), (0.0, -5.0, 0.0),
    (1.0 + 2.0**-23, 1.0 - 2.0**-24, -1.0), (2.0, 0.0, 1.0), (-2.0, 0.0, 1.0), (0.0, 0.0, 0.0), (-4.0, 2.0, 8.0),
    (9.0, 7.0, -63.0), (F.f32(0.1) if False else float(np.float32(0.1)), float(np.float32(0.3)), float(np.float32(-0.03))),
]
rows = list(special)
while len(rows) < 256:
    v = [float(np.float32(rng.standard_normal() * 2.0 ** rng.integers(-30, 31))) for _ in range(3)]
    if rng.random() < 0.2: v[2] = float(np.float32(-v[0] * v[1]))   # fma cancellation
    rows.append(tuple(v))
OPS = [("add", lambda m, a, b, c: F.add(F.F32, m, a, b)), ("sub", lambda m, a, b, c: F.sub(F.F32, m, a, b)),
       ("mul", lambda m, a, b, c: F.mul(F.F32, m, a, b)), ("fma", lambda m, a, b, c: F.fma(F.F32, m, a, b, c)),
       ("div", lambda m, a, b, c: F.div(F.F32, m, a, b)), ("sqrt", lambda m, a, b, c: F.sqrt(F.F32, m, a)),
       ("rcp", lambda m, a, b, c: F.rcp(F.F32, m, a))]
def tiny(a, b, c):
    # would any operand or (exact, wide-exponent) result be subnormal for f32?  (-> ftz would differ)
    for v in (a, b, c):
        if v != 0 and abs(v) < 2.0**-126 and not math.isnan(v): return True
    for name, f in OPS:
        r = F.bits_f64(f.__call__("rn", a, b, c) if False else {"add": F.add, "sub": F.sub, "mul": F.mul}.get(name, None)(F.F64, "rn", a, b) if name in ("add", "sub", "mul") else
                      F.fma(F.F64, "rn", a, b, c) if name == "fma" else F.div(F.F64, "rn", a, b) if name == "div" else
                      F.sqrt(F.F64, "rn", a) if name == "sqrt" else F.rcp(F.F64, "rn", a))
        if r != 0 and not math.isnan(r) and abs(r) < 2.0**-125: return True
    return False
rows = [r for r in rows if not tiny(*r)]
x = np.array([r[0] for r in rows], np.float32); y = np.array([r[1] for r in rows], np.float32); z = np.array([r[2] for r in rows], np.float32)
save_in("x.npy", x); save_in("y.npy", y); save_in("z.npy", z)
out = []
for a, b, c in rows:
    for name, f in OPS:
        for m in ("rn", "rz", "rd", "ru"):
            out.append(f(m, a, b, c))
save_exp("out.npy", np.array(out, np.uint32).view(np.float32))
