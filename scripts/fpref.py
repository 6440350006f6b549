"""Exact reference floating point: correctly rounded results in the four IEEE
rounding modes for binary16, bfloat16, binary32 and binary64, computed with
fractions.Fraction (no host FPU rounding involved).

Values are passed as Python floats (a binary32/binary16 value is exactly
representable as a Python float), results are returned as integer bit
patterns of the destination format.  NaN results are the canonical NaN of the
format (0x7fffffff for f32, as GPUs produce; 0x7fff for f16/bf16,
0x7fffffffffffffff for f64).

modes: 'rn' (nearest even), 'rz' (toward zero), 'rd' (toward -inf), 'ru' (toward +inf)
"""
import math
import struct
from fractions import Fraction

# (exponent bits, fraction bits)
F16 = (5, 10)
BF16 = (8, 7)
F32 = (8, 23)
F64 = (11, 52)

MODES = ("rn", "rz", "rd", "ru")


def _params(fmt):
    eb, mb = fmt
    bias = (1 << (eb - 1)) - 1
    return eb, mb, bias, 1 - bias, bias  # eb, mb, bias, emin, emax


def canonical_nan(fmt):
    eb, mb = fmt
    return (1 << (eb + mb)) - 1  # 0x7fff..., all exponent and fraction bits set


def inf_bits(fmt, sign):
    eb, mb = fmt
    return (sign << (eb + mb)) | (((1 << eb) - 1) << mb)


def zero_bits(fmt, sign):
    eb, mb = fmt
    return sign << (eb + mb)


def max_finite_bits(fmt, sign):
    eb, mb = fmt
    return (sign << (eb + mb)) | (((1 << eb) - 2) << mb) | ((1 << mb) - 1)


def _round_int(n, r, neg, mode):
    """n = floor(|x|/q), r = fractional part in [0,1) as Fraction; returns rounded magnitude."""
    if r == 0:
        return n
    if mode == "rz":
        return n
    if mode == "rn":
        if r > Fraction(1, 2) or (r == Fraction(1, 2) and (n & 1)):
            return n + 1
        return n
    if mode == "ru":
        return n if neg else n + 1
    if mode == "rd":
        return n + 1 if neg else n
    raise ValueError(mode)


def round_frac(q, fmt, mode, zero_sign=0):
    """Round the exact rational q to fmt with mode. zero_sign is the sign used
    when q == 0 exactly (IEEE sign-of-zero rules are the caller's job)."""
    eb, mb, bias, emin, emax = _params(fmt)
    q = Fraction(q)
    if q == 0:
        return zero_bits(fmt, zero_sign)
    neg = q < 0
    sign = 1 if neg else 0
    a = -q if neg else q
    # exponent e with 2^e <= a < 2^(e+1)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    if e < emin:
        e = emin
    quantum = Fraction(2) ** (e - mb)
    scaled = a / quantum
    n = scaled.numerator // scaled.denominator
    r = scaled - n
    m = _round_int(n, r, neg, mode)
    if m == (1 << (mb + 1)):
        m >>= 1
        e += 1
    if e > emax:
        if mode == "rn":
            return inf_bits(fmt, sign)
        if mode == "rz":
            return max_finite_bits(fmt, sign)
        if mode == "ru":
            return max_finite_bits(fmt, 1) if neg else inf_bits(fmt, 0)
        if mode == "rd":
            return inf_bits(fmt, 1) if neg else max_finite_bits(fmt, 0)
    if m < (1 << mb):  # subnormal (or zero after rounding)
        return (sign << (eb + mb)) | m
    return (sign << (eb + mb)) | ((e + bias) << mb) | (m - (1 << mb))


# ---- conversions between bits and Python floats ---------------------------

def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b & 0xffffffff))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bits_f64(b):
    return struct.unpack("<d", struct.pack("<Q", b & 0xffffffffffffffff))[0]


def bits_to_float(b, fmt):
    """Decode any format's bits to a Python float (exact)."""
    eb, mb, bias, emin, emax = _params(fmt)
    sign = (b >> (eb + mb)) & 1
    ex = (b >> mb) & ((1 << eb) - 1)
    fr = b & ((1 << mb) - 1)
    s = -1.0 if sign else 1.0
    if ex == (1 << eb) - 1:
        return math.nan if fr else s * math.inf
    if ex == 0:
        return s * math.ldexp(fr, emin - mb)
    return s * math.ldexp(fr | (1 << mb), ex - bias - mb)


def _sign(x):
    return 1 if math.copysign(1.0, x) < 0 else 0


# ---- correctly rounded operations ----------------------------------------

def add(fmt, mode, a, b):
    if math.isnan(a) or math.isnan(b):
        return canonical_nan(fmt)
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b) and _sign(a) != _sign(b):
            return canonical_nan(fmt)
        return inf_bits(fmt, _sign(a) if math.isinf(a) else _sign(b))
    q = Fraction(a) + Fraction(b)
    if q == 0:
        if a == 0 and b == 0 and _sign(a) == _sign(b):
            zs = _sign(a)
        else:
            zs = 1 if mode == "rd" else 0
        return zero_bits(fmt, zs)
    return round_frac(q, fmt, mode)


def sub(fmt, mode, a, b):
    return add(fmt, mode, a, -b)


def mul(fmt, mode, a, b):
    if math.isnan(a) or math.isnan(b):
        return canonical_nan(fmt)
    s = _sign(a) ^ _sign(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return canonical_nan(fmt)
        return inf_bits(fmt, s)
    return round_frac(Fraction(a) * Fraction(b), fmt, mode, s)


def fma(fmt, mode, a, b, c):
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return canonical_nan(fmt)
    ps = _sign(a) ^ _sign(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return canonical_nan(fmt)
        if math.isinf(c) and _sign(c) != ps:
            return canonical_nan(fmt)
        return inf_bits(fmt, ps)
    if math.isinf(c):
        return inf_bits(fmt, _sign(c))
    p = Fraction(a) * Fraction(b)
    q = p + Fraction(c)
    if q == 0:
        if p == 0 and c == 0 and ps == _sign(c):
            zs = ps
        else:
            zs = 1 if mode == "rd" else 0
        return zero_bits(fmt, zs)
    return round_frac(q, fmt, mode)


def div(fmt, mode, a, b):
    if math.isnan(a) or math.isnan(b):
        return canonical_nan(fmt)
    s = _sign(a) ^ _sign(b)
    if math.isinf(a):
        if math.isinf(b):
            return canonical_nan(fmt)
        return inf_bits(fmt, s)
    if math.isinf(b):
        return zero_bits(fmt, s)
    if b == 0:
        if a == 0:
            return canonical_nan(fmt)
        return inf_bits(fmt, s)
    return round_frac(Fraction(a) / Fraction(b), fmt, mode, s)


def rcp(fmt, mode, a):
    return div(fmt, mode, 1.0, a)


def sqrt(fmt, mode, a):
    if math.isnan(a):
        return canonical_nan(fmt)
    if a == 0:
        return zero_bits(fmt, _sign(a))
    if a < 0:
        return canonical_nan(fmt)
    if math.isinf(a):
        return inf_bits(fmt, 0)
    q = Fraction(a)
    num, den = q.numerator, q.denominator  # den is a power of two
    k = 2 * (fmt[1] + 1200)
    t = num * den * (1 << (2 * k))
    s = math.isqrt(t)
    if s * s == t:
        v = Fraction(s, den << k)
    else:  # strictly between s and s+1; no rounding boundary lies in that interval
        v = Fraction(2 * s + 1, (den << k) * 2)
    return round_frac(v, fmt, mode)


def cvt(fmt, mode, x):
    """Round a float (any value, incl. specials) to fmt."""
    if math.isnan(x):
        return canonical_nan(fmt)
    if math.isinf(x):
        return inf_bits(fmt, _sign(x))
    if x == 0:
        return zero_bits(fmt, _sign(x))
    return round_frac(Fraction(x), fmt, mode)


def int_to(fmt, mode, i):
    return round_frac(Fraction(int(i)), fmt, mode)


def to_int(x, mode, bits, signed):
    """PTX cvt.rXi.sN/uN.fM: round to integer with mode, saturate, NaN -> 0."""
    if math.isnan(x):
        return 0
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    if math.isinf(x):
        return hi if x > 0 else lo
    q = Fraction(x)
    neg = q < 0
    a = -q if neg else q
    n = a.numerator // a.denominator
    r = a - n
    m = _round_int(n, r, neg, mode)
    v = -m if neg else m
    return max(lo, min(hi, v))


def round_to_integral(x, mode):
    """cvt.rni/rzi/rmi/rpi.f32.f32 (value stays float). Returns a float."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    q = Fraction(x)
    neg = q < 0
    a = -q if neg else q
    n = a.numerator // a.denominator
    m = _round_int(n, a - n, neg, mode)
    if m == 0:
        return -0.0 if neg else 0.0
    return float(-m if neg else m)


def ftz32(x):
    """Flush an f32 subnormal (as Python float) to a signed zero."""
    if x != 0 and not math.isinf(x) and not math.isnan(x) and abs(x) < 2.0 ** -126:
        return math.copysign(0.0, x)
    return x
