import math, itertools, numpy as np
from corpus_util import save_in, save_exp
nan, inf = math.nan, math.inf
vals = [nan, -inf, -1.5, -0.0, 0.0, 1e-30, 1.5, inf]
pairs = list(itertools.product(vals, vals))
rng = np.random.default_rng(17)
N = len(pairs)
x = np.array([a for a, b in pairs], np.float32); y = np.array([b for a, b in pairs], np.float32)
p = rng.integers(-3, 4, N).astype(np.int32); q = rng.integers(-3, 4, N).astype(np.int32)
tv = [0.0, -0.0, 1e-40, -1e-45, 1.17549435e-38, 1.1754942e-38, 1.0, inf, -inf, nan, 3.4e38, -2.0]
t = np.array([tv[k % len(tv)] for k in range(N)], np.float32)
for nm, v in (("x", x), ("y", y), ("p", p), ("q", q), ("t", t)): save_in(nm + ".npy", v)
out = []
for i in range(N):
    a, b, u = float(x[i]), float(y[i]), float(t[i]); P, Q = int(p[i]), int(q[i])
    un = math.isnan(a) or math.isnan(b)
    lt = a < b
    o = [a < b, a <= b, a == b, a != b, a > b, a >= b, not (a < b), un, math.isnan(a), math.isinf(a),
         math.isfinite(a), math.copysign(1, a) < 0,
         (P < Q) and lt, (P > Q) or (a >= b), (P != Q) != (not un), P if (un or a < b) else Q,
         P if (a >= 0) else Q, 0xffffffff if a > b else 0, 0xffffffff if (un or a > b) else 0]
    sub = u != 0 and math.isfinite(u) and abs(u) < 2.0**-126
    normal = math.isfinite(u) and not sub      # zeros count as normal for testp
    o.append(int(sub) | int(normal) << 1 | int(math.isnan(u)) << 2 | int(not math.isnan(u)) << 3 |
             int(math.isfinite(u)) << 4 | int(math.isinf(u)) << 5)
    out += [int(v) & 0xffffffff for v in o]
save_exp("out.npy", np.array(out, np.uint32))
