import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(16)
B = F.BF16
def h(v): return F.bits_to_float(F.cvt(B, "rn", v), B)
rows = [(1.0, 2.0**-8, 0.0), (1.0, -2.0**-8, 0.0), (float(np.float32(1.0 + 2.0**-8 + 2.0**-20)), 1.0, 1.0),
        (float(np.float32(3.3895314e38)), 2.0, 0.0), (float(np.float32(3.39e38)), 1.0, 0.0), (-0.0, -0.0, -0.0),
        (0.1, 0.2, 0.3), (-1.0, 1.0, 0.0), (math.inf, 2.0, 1.0), (1e30, 1e10, -1e40 if False else -1e38)]
while len(rows) < 128:
    e = rng.integers(-60, 60, 3)
    rows.append(tuple(float(np.float32(rng.standard_normal() * 2.0 ** int(k))) for k in e))
for k, nm in enumerate("xyz"): save_in(nm + ".npy", np.array([r[k] for r in rows], np.float32))
o16 = []; of = []
for a, b, c in rows:
    A, Bv, C = h(a), h(b), h(c)
    o16 += [F.cvt(B, m, float(np.float32(a))) for m in ("rn", "rz")]
    o16 += [F.add(B, "rn", A, Bv), F.sub(B, "rn", A, Bv), F.mul(B, "rn", A, Bv), F.fma(B, "rn", A, Bv, C)]
    of += [A, F.bits_to_float(F.fma(B, "rn", Bv, C, A), B)]
assert not any((v & 0x7f80) == 0x7f80 and (v & 0x7f) for v in o16)
save_exp("o16.npy", np.array(o16, np.uint16)); save_exp("of.npy", np.array(of, np.float32))
