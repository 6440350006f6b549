import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(18)
N = 256
x = rng.uniform(-math.pi, math.pi, N).astype(np.float32)
y = np.exp(rng.uniform(math.log(0.01), math.log(1000.0), N)).astype(np.float32)
d = rng.uniform(-10, 10, N)
save_in("x.npy", x); save_in("y.npy", y); save_in("d.npy", d)
f32 = lambda v: np.float32(v)
mul = lambda a, b: F.bits_f32(F.mul(F.F32, "rn", a, b))
S, C, E, L, P, Q, ER, TH = ([] for _ in range(8))
for a, b in zip(x.tolist(), y.tolist()):
    S.append(math.sin(a)); C.append(math.cos(a)); E.append(math.exp(mul(a, 3.0))); L.append(math.log(b))
    base = F.bits_f32(F.fma(F.F32, "rn", b, float(np.float32(0.004)), 0.5))  # the compiler contracts b*0.004f+0.5f into fma
    P.append(base ** a); Q.append(F.bits_f32(F.sqrt(F.F32, "rn", b))); ER.append(math.erf(a)); TH.append(math.tanh(mul(a, 1.5)))
for nm, v in (("sin", S), ("cos", C), ("exp", E), ("log", L), ("pow", P), ("sqrt", Q), ("erf", ER), ("tanh", TH)):
    save_exp(nm + ".npy", np.array(v, np.float32))
save_exp("dsin.npy", np.array([math.sin(g) for g in d])); save_exp("dexp.npy", np.array([math.exp(g * 2.0) for g in d]))
save_exp("dlog.npy", np.array([math.log(F.bits_f64(F.fma(F.F64, "rn", abs(g), 1000.0, 1e-3))) for g in d]))
