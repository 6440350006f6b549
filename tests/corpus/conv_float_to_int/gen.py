import math, numpy as np, fpref as F
from corpus_util import save_in, save_exp, sx, M32, M64
rng = np.random.default_rng(11)
sp = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1e-30, -1e-30, 3.7, -3.7,
      2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 1e20, -1e20,
      9.2233715e18, 9.223372e18, -9.223372e18, -9.3e18, 1.8446743e19, 2e19, math.inf, -math.inf, math.nan, 8388609.0, 16777217.0]
dsp = [0.0, -0.0, 0.5, -2.5, 1e-310, -1e-310, 2147483647.4, 2147483647.5, 2147483647.6, -2147483648.5, -2147483649.0,
       4294967295.5, 4294967296.0, 9.3e18, -9.3e18, 1.9e19, math.inf, -math.inf, math.nan, -1e-300, 123456789.5]
N = 128
x = np.concatenate([np.array(sp, np.float32), (rng.standard_normal(N - len(sp)) * 10.0 ** rng.integers(0, 11, N - len(sp))).astype(np.float32)])
d = np.concatenate([np.array(dsp), rng.standard_normal(N - len(dsp)) * 10.0 ** rng.integers(0, 20, N - len(dsp))])
x[60:80] = np.float32(rng.integers(-20, 20, 20) + 0.5)  # ties
save_in("x.npy", x); save_in("d.npy", d)
# PTX ISA (cvt): a NaN source converts to 0, except from an .f64 source or
# into a 64-bit destination, where it converts to 1 << (bits - 1).
def T(v, mode, bits, signed, f64_src=False):
    if math.isnan(v) and (f64_src or bits == 64):
        return 1 << (bits - 1)
    return F.to_int(v, mode, bits, signed)
o32 = []; o64 = []
for f, g in zip(x.tolist(), d.tolist()):
    half = F.bits_f32(F.mul(F.F32, "rn", f, 0.5))
    o32 += [T(f, "rn", 32, 1), T(f, "rz", 32, 1), T(f, "rd", 32, 1), T(f, "ru", 32, 1),
            T(f, "rn", 32, 0), T(f, "rz", 32, 0), T(f, "rd", 32, 0), T(f, "ru", 32, 0),
            T(g, "rn", 32, 1, True), T(g, "rz", 32, 1, True), T(g, "rd", 32, 1, True), T(g, "ru", 32, 1, True),
            T(g, "rn", 32, 0, True), T(g, "rz", 32, 0, True), T(f, "rz", 32, 1), T(f, "rz", 32, 0), T(half, "rn", 32, 1)]
    o64 += [T(f, "rn", 64, 1), T(f, "rz", 64, 1), T(f, "rd", 64, 1), T(f, "ru", 64, 1),
            T(f, "rn", 64, 0), T(g, "rd", 64, 1, True), T(g, "ru", 64, 0, True), T(g, "rz", 64, 1, True)]
save_exp("o32.npy", np.array([sx(v, 32) for v in o32], np.int32)); save_exp("o64.npy", np.array([sx(v, 64) for v in o64], np.int64))
