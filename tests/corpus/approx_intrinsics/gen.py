import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(19)
N = 256
x = rng.uniform(-math.pi, math.pi, N).astype(np.float32)
y = np.exp(rng.uniform(math.log(0.01), math.log(1000.0), N)).astype(np.float32)
d = rng.standard_normal(N) * 10.0 ** rng.integers(-100, 100, N)
save_in("x.npy", x); save_in("y.npy", y); save_in("d.npy", d)
m3 = lambda a: F.bits_f32(F.mul(F.F32, "rn", a, 3.0))
X, Y = x.tolist(), y.tolist()
out = {"s": [math.sin(a) for a in X], "c": [math.cos(a) for a in X], "e": [math.exp(m3(a)) for a in X],
       "l": [math.log(b) for b in Y], "q": [a / b for a, b in zip(X, Y)], "rs": [1 / math.sqrt(b) for b in Y],
       "e2": [2.0 ** m3(a) for a in X], "l2": [math.log2(b) for b in Y]}
for k, v in out.items(): save_exp(k + ".npy", np.array(v, np.float32))
save_exp("rc.npy", 1.0 / d)
