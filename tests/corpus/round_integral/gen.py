import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(14)
N = 96
sp = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1e-30, -1e-30, 8388607.5, -8388607.5,
      8388609.0, 1e30, math.inf, -math.inf, math.nan, 0.7, -0.7, 3.5, -3.5]
x = np.concatenate([np.array(sp, np.float32), (rng.standard_normal(N - len(sp)) * 100).astype(np.float32)])
d = np.concatenate([np.array(sp + [1e-310, -1e-310, 4503599627370495.5]), rng.standard_normal(N - len(sp) - 3) * 1e6])
save_in("x.npy", x); save_in("d.npy", d)
def rnd(v):  # half away from zero
    if math.isnan(v) or math.isinf(v) or v == 0: return v
    r = F.round_to_integral(v, "rz"); fr = abs(v - r)
    if fr >= 0.5: r = r + math.copysign(1.0, v)
    return math.copysign(0.0, v) if r == 0 else r
of = []; od = []
for f in x.tolist(): of += [F.round_to_integral(f, m) for m in ("rn", "rz", "rd", "ru")] + [rnd(f)]
for g in d.tolist(): od += [F.round_to_integral(g, m) for m in ("rn", "rz", "rd", "ru")] + [rnd(g)]
save_exp("of.npy", np.array(of, np.float32)); save_exp("od.npy", np.array(od, np.float64))
