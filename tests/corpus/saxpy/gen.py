import numpy as np, fpref as F
from corpus_util import save_in, save_exp
rng = np.random.default_rng(1)
N = 3000
x = rng.standard_normal(N).astype(np.float32)
y = rng.standard_normal(N).astype(np.float32)
save_in("x.npy", x); save_in("y.npy", y)
def ref(n, a):
    out = y.copy().view(np.uint32)
    for i in range(n):
        out[i] = F.fma(F.F32, "rn", a, float(x[i]), float(y[i]))
    return out.view(np.float32)
save_exp("y_3000.npy", ref(3000, 1.5))
save_exp("y_1000.npy", ref(1000, -0.3125))
