//! `cvt`: float <-> float, float -> integral float, float -> integer,
//! integer -> float.

use crate::arith::{canon_f32, canon_f64, flush_f32, CANONICAL_NAN_F64};
use crate::round::{convert, round_pack, Format, Rounding};

/// `cvt.rnd{.ftz}.f32.f64`: one rounding per `r`; `.ftz` flushes a subnormal
/// f32 result. NaN -> canonical f32 NaN.
pub fn f64_to_f32(x: f64, r: Rounding, ftz: bool) -> f32 {
    let d = f32::from_bits(convert(Format::F64, Format::F32, x.to_bits(), r) as u32);
    if ftz {
        flush_f32(d)
    } else {
        d
    }
}

/// `cvt{.ftz}.f64.f32`: exact; `.ftz` flushes a subnormal input.
/// NaN -> canonical f64 NaN (assumption: the GPU does not keep the payload).
pub fn f32_to_f64(x: f32, ftz: bool) -> f64 {
    let x = if ftz { flush_f32(x) } else { x };
    if x.is_nan() {
        f64::from_bits(CANONICAL_NAN_F64)
    } else {
        x as f64
    }
}

/// `cvt.rni/rzi/rmi/rpi{.ftz}.f32.f32`: round to an integral value, keeping
/// the sign of zero results (e.g. `.rni` of -0.3 is -0.0). NaN -> canonical.
pub fn round_int_f32(x: f32, r: Rounding, ftz: bool) -> f32 {
    let x = if ftz { flush_f32(x) } else { x };
    let d = match r {
        Rounding::Nearest => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    };
    canon_f32(d)
}

/// `cvt.rni/rzi/rmi/rpi.f64.f64`.
pub fn round_int_f64(x: f64, r: Rounding) -> f64 {
    let d = match r {
        Rounding::Nearest => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    };
    canon_f64(d)
}

/// Source format of a float -> integer conversion (matters for `.ftz` and for
/// the NaN result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSrc {
    /// `.f16`
    F16,
    /// `.bf16`
    BF16,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
}

/// Float -> integer `cvt.{rni,rzi,rmi,rpi}{.ftz}.{s,u}{8,16,32,64}.{f16,bf16,f32,f64}`
/// with the source kind given explicitly. `x` is the exact source value.
///
/// * rounds per `r` to an integer, then clamps to the destination range
///   (PTX: "clamped to the destination range by default");
/// * `.ftz` flushes an f32 subnormal input (only meaningful for F32 source);
/// * NaN, per the PTX ISA (CUDA 13 edition): 0 if the source is not `.f64`
///   and the destination is not 64-bit; otherwise `1 << (bits - 1)` (i.e.
///   MININT for signed, (MAXINT >> 1) + 1 for unsigned).
///
/// Returns the destination's bit pattern zero-extended to 64 bits.
pub fn float_to_int_ex(
    x: f64,
    src: FloatSrc,
    r: Rounding,
    ftz: bool,
    signed: bool,
    bits: u32,
) -> u64 {
    debug_assert!(matches!(bits, 8 | 16 | 32 | 64));
    let mask: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if x.is_nan() {
        return if src != FloatSrc::F64 && bits != 64 {
            0
        } else {
            1u64 << (bits - 1)
        };
    }
    let x = if ftz && src == FloatSrc::F32 && x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64 {
        0.0
    } else {
        x
    };
    let v = round_int_f64(x, r);
    let (lo, hi): (i128, i128) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    // Every bound is within 1 of a power of two; compare in f64 exactly by
    // testing against the powers of two.
    let i: i128 = if v >= hi as f64 + 1.0 {
        // hi + 1 is a power of two, exactly representable
        hi
    } else if v <= lo as f64 {
        lo
    } else {
        (v as i128).clamp(lo, hi)
    };
    (i as u64) & mask
}

/// Float -> integer as in the crate brief: `x` holds the exact source value
/// (an f32 or f16 value widened to f64 exactly); `src_is_f32` selects `.ftz`
/// handling and the NaN rule for non-f64 sources, otherwise the source is
/// taken to be `.f64`. For f16/bf16 sources use [`float_to_int_ex`] or
/// [`crate::half::f16_to_int`].
pub fn float_to_int(
    x: f64,
    src_is_f32: bool,
    r: Rounding,
    ftz: bool,
    signed: bool,
    bits: u32,
) -> u64 {
    let src = if src_is_f32 {
        FloatSrc::F32
    } else {
        FloatSrc::F64
    };
    float_to_int_ex(x, src, r, ftz, signed, bits)
}

/// Round an exact integer into `fmt`.
pub fn int_to_format(fmt: Format, x: i128, r: Rounding) -> u64 {
    let neg = x < 0;
    let mag = x.unsigned_abs();
    // Keep at most 127 bits so the sticky invariant of round_pack holds.
    round_pack(fmt, neg, mag, 0, false, r)
}

/// `cvt.rnd.f32.{s,u}{8..64}`: x is the exact integer value.
pub fn int_to_f32(x: i128, r: Rounding) -> f32 {
    f32::from_bits(int_to_format(Format::F32, x, r) as u32)
}

/// `cvt.rnd.f64.{s,u}{8..64}`.
pub fn int_to_f64(x: i128, r: Rounding) -> f64 {
    f64::from_bits(int_to_format(Format::F64, x, r))
}
