//! Core of the crate: binary floating-point formats, decoding, and the single
//! routine [`round_pack`] that rounds an exactly known value (an integer
//! mantissa times a power of two, plus a "sticky" bit for anything below the
//! mantissa's last bit) into a format under one of the four IEEE rounding
//! directions, with IEEE gradual underflow and IEEE overflow rules.
//!
//! Every correctly rounded operation in this crate (f16, bf16, f32, f64 and
//! conversions between them) ends in `round_pack`, so there is one place where
//! rounding is decided.

/// IEEE rounding direction, as PTX's `.rn .rz .rm .rp` (and `.rni .rzi .rmi
/// .rpi` for rounding to integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// `.rn`: to nearest, ties to even.
    Nearest,
    /// `.rz`: toward zero.
    Zero,
    /// `.rm`: toward negative infinity.
    Down,
    /// `.rp`: toward positive infinity.
    Up,
}

/// A binary interchange format described by its field widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// Stored fraction bits (precision minus one).
    pub frac_bits: u32,
    /// Exponent field bits.
    pub exp_bits: u32,
}

impl Format {
    /// IEEE binary16.
    pub const F16: Format = Format {
        frac_bits: 10,
        exp_bits: 5,
    };
    /// bfloat16.
    pub const BF16: Format = Format {
        frac_bits: 7,
        exp_bits: 8,
    };
    /// IEEE binary32.
    pub const F32: Format = Format {
        frac_bits: 23,
        exp_bits: 8,
    };
    /// IEEE binary64.
    pub const F64: Format = Format {
        frac_bits: 52,
        exp_bits: 11,
    };
    /// The "1.11.20" format of the upper word of an f64, used by
    /// `rcp.approx.ftz.f64` / `rsqrt.approx.ftz.f64`.
    pub const F64_HI: Format = Format {
        frac_bits: 20,
        exp_bits: 11,
    };

    /// Total width in bits.
    pub const fn width(self) -> u32 {
        1 + self.exp_bits + self.frac_bits
    }
    /// Exponent bias.
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    /// Smallest normal unbiased exponent.
    pub const fn emin(self) -> i32 {
        1 - self.bias()
    }
    /// Sign bit mask.
    pub const fn sign_mask(self) -> u64 {
        1 << (self.width() - 1)
    }
    /// Fraction field mask.
    pub const fn frac_mask(self) -> u64 {
        (1 << self.frac_bits) - 1
    }
    /// Maximum (all ones) exponent field value.
    pub const fn exp_max_field(self) -> u64 {
        (1 << self.exp_bits) - 1
    }
    /// Canonical NaN as produced by NVIDIA GPUs: every bit except the sign set
    /// (f32 `0x7fffffff`, f64 `0x7fffffffffffffff`, f16/bf16 `0x7fff`).
    pub const fn canonical_nan(self) -> u64 {
        self.sign_mask() - 1
    }
    /// Signed infinity.
    pub const fn inf(self, neg: bool) -> u64 {
        (if neg { self.sign_mask() } else { 0 }) | (self.exp_max_field() << self.frac_bits)
    }
    /// Signed largest finite value.
    pub const fn max_finite(self, neg: bool) -> u64 {
        self.inf(neg) - 1
    }
    /// Signed zero.
    pub const fn zero(self, neg: bool) -> u64 {
        if neg {
            self.sign_mask()
        } else {
            0
        }
    }
    fn exp_field(self, bits: u64) -> u64 {
        (bits >> self.frac_bits) & self.exp_max_field()
    }
    /// Is `bits` a NaN?
    pub fn is_nan(self, bits: u64) -> bool {
        self.exp_field(bits) == self.exp_max_field() && bits & self.frac_mask() != 0
    }
    /// Is `bits` an infinity?
    pub fn is_inf(self, bits: u64) -> bool {
        self.exp_field(bits) == self.exp_max_field() && bits & self.frac_mask() == 0
    }
    /// Is `bits` a (nonzero) subnormal?
    pub fn is_subnormal(self, bits: u64) -> bool {
        self.exp_field(bits) == 0 && bits & self.frac_mask() != 0
    }
    /// Is `bits` a zero of either sign?
    pub fn is_zero(self, bits: u64) -> bool {
        bits & !self.sign_mask() & ((1u128 << self.width()) - 1) as u64 == 0
    }
    /// Sign bit.
    pub fn sign(self, bits: u64) -> bool {
        bits & self.sign_mask() != 0
    }
    /// Flush a subnormal to the zero of the same sign (`.ftz`).
    pub fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_mask()
        } else {
            bits
        }
    }
}

/// Decoded value of a format's bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Any NaN.
    Nan,
    /// Infinity with its sign (true = negative).
    Inf(bool),
    /// Zero with its sign.
    Zero(bool),
    /// Nonzero finite value `(-1)^sign * mant * 2^exp` (mant not normalised for
    /// subnormals).
    Finite { sign: bool, mant: u64, exp: i32 },
}

/// Decode `bits` of format `fmt`.
pub fn unpack(fmt: Format, bits: u64) -> Class {
    let sign = fmt.sign(bits);
    let e = fmt.exp_field(bits);
    let f = bits & fmt.frac_mask();
    if e == fmt.exp_max_field() {
        if f == 0 {
            Class::Inf(sign)
        } else {
            Class::Nan
        }
    } else if e == 0 {
        if f == 0 {
            Class::Zero(sign)
        } else {
            Class::Finite {
                sign,
                mant: f,
                exp: fmt.emin() - fmt.frac_bits as i32,
            }
        }
    } else {
        Class::Finite {
            sign,
            mant: f | (1 << fmt.frac_bits),
            exp: e as i32 - fmt.bias() - fmt.frac_bits as i32,
        }
    }
}

/// Round the exact value `(-1)^sign * (mant + δ) * 2^exp` into `fmt`, where
/// `δ` is 0 when `sticky` is false and strictly between 0 and 1 when it is true.
///
/// Invariant for callers: when `sticky` is true, `mant` must carry at least
/// `precision + 2` significant bits (so the sticky part lies strictly below
/// the rounding bit). All callers in this crate give 60+ bits.
///
/// `mant == 0 && !sticky` gives a zero of the given sign (callers decide the
/// sign of exact zero results themselves).
///
/// Subnormal results follow IEEE gradual underflow; overflow gives infinity
/// or the largest finite value according to the direction.
pub fn round_pack(fmt: Format, sign: bool, mant: u128, exp: i32, sticky: bool, r: Rounding) -> u64 {
    let p = fmt.frac_bits as i32 + 1;
    if mant == 0 {
        if !sticky {
            return fmt.zero(sign);
        }
        // Only reachable if a caller broke the invariant; treat as a value far
        // below the smallest subnormal.
        return round_pack(fmt, sign, 1 << 100, exp - 200, true, r);
    }
    let nb = 128 - mant.leading_zeros() as i32;
    let e_lead = exp + nb - 1;
    let mut q = (e_lead - (p - 1)).max(fmt.emin() - (p - 1));
    let shift = q - exp;
    let (mut keep, half, rest): (u128, bool, bool) = if shift <= 0 {
        (mant << (-shift) as u32, false, sticky)
    } else if shift > 128 {
        (0, false, true)
    } else if shift == 128 {
        (
            0,
            mant >> 127 == 1,
            (mant & ((1u128 << 127) - 1)) != 0 || sticky,
        )
    } else {
        let s = shift as u32;
        (
            mant >> s,
            (mant >> (s - 1)) & 1 == 1,
            (mant & ((1u128 << (s - 1)) - 1)) != 0 || sticky,
        )
    };
    let inc = match r {
        Rounding::Nearest => half && (rest || keep & 1 == 1),
        Rounding::Zero => false,
        Rounding::Up => !sign && (half || rest),
        Rounding::Down => sign && (half || rest),
    };
    if inc {
        keep += 1;
    }
    if keep == 1u128 << p {
        keep >>= 1;
        q += 1;
    }
    let sbit = fmt.zero(sign);
    if keep >= 1u128 << (p - 1) {
        let biased = q + (p - 1) + fmt.bias();
        if biased as i64 >= fmt.exp_max_field() as i64 {
            return overflow(fmt, sign, r);
        }
        sbit | ((biased as u64) << fmt.frac_bits) | (keep as u64 & fmt.frac_mask())
    } else {
        sbit | keep as u64
    }
}

/// Result of an overflowing operation under direction `r`.
pub fn overflow(fmt: Format, sign: bool, r: Rounding) -> u64 {
    let to_inf = match r {
        Rounding::Nearest => true,
        Rounding::Zero => false,
        Rounding::Up => !sign,
        Rounding::Down => sign,
    };
    if to_inf {
        fmt.inf(sign)
    } else {
        fmt.max_finite(sign)
    }
}

/// Convert between formats with one rounding. NaN gives the destination's
/// canonical NaN.
pub fn convert(from: Format, to: Format, bits: u64, r: Rounding) -> u64 {
    match unpack(from, bits) {
        Class::Nan => to.canonical_nan(),
        Class::Inf(s) => to.inf(s),
        Class::Zero(s) => to.zero(s),
        Class::Finite { sign, mant, exp } => round_pack(to, sign, mant as u128, exp, false, r),
    }
}

/// Next representable value toward +infinity (NaN unchanged, +inf unchanged,
/// -0 and +0 both go to the smallest positive subnormal).
pub fn next_up(fmt: Format, bits: u64) -> u64 {
    if fmt.is_nan(bits) || bits == fmt.inf(false) {
        return bits;
    }
    if fmt.is_zero(bits) {
        return 1;
    }
    if fmt.sign(bits) {
        bits - 1
    } else {
        bits + 1
    }
}

/// Next representable value toward -infinity.
pub fn next_down(fmt: Format, bits: u64) -> u64 {
    let neg = bits ^ fmt.sign_mask();
    next_up(fmt, neg) ^ fmt.sign_mask()
}
