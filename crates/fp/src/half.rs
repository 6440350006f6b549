//! IEEE binary16 (`.f16`) and bfloat16 (`.bf16`) values as `u16` bits:
//! conversions, arithmetic with a single rounding, min/max, `.f16x2` helpers.
//!
//! NaN results are the canonical `0x7fff` for both formats. `.ftz` flushes
//! subnormal inputs and results of the 16-bit format.

use crate::arith::CANONICAL_NAN_F32;
use crate::convert::{float_to_int_ex, int_to_format, FloatSrc};
use crate::minmax::minmax_bits;
use crate::round::{convert, Format, Rounding};
use crate::soft;

/// Canonical f16 / bf16 NaN.
pub const CANONICAL_NAN_F16: u16 = 0x7fff;
/// Canonical bf16 NaN.
pub const CANONICAL_NAN_BF16: u16 = 0x7fff;

const H: Format = Format::F16;
const B: Format = Format::BF16;

/// `cvt.rnd.f16.f32`: single rounding; NaN -> 0x7fff.
pub fn f32_to_f16(x: f32, r: Rounding) -> u16 {
    convert(Format::F32, H, x.to_bits() as u64, r) as u16
}

/// `cvt.rnd.f16.f64`: single rounding directly from f64 (no double rounding).
pub fn f64_to_f16(x: f64, r: Rounding) -> u16 {
    convert(Format::F64, H, x.to_bits(), r) as u16
}

/// `cvt.f32.f16`: exact. NaN -> canonical f32 NaN (assumption).
pub fn f16_to_f32(h: u16) -> f32 {
    f32::from_bits(convert(H, Format::F32, h as u64, Rounding::Nearest) as u32)
}

/// `cvt.f64.f16`: exact. NaN -> canonical f64 NaN (assumption).
pub fn f16_to_f64(h: u16) -> f64 {
    f64::from_bits(convert(H, Format::F64, h as u64, Rounding::Nearest))
}

/// `cvt.rnd.bf16.f32`: single rounding; NaN -> 0x7fff.
pub fn f32_to_bf16(x: f32, r: Rounding) -> u16 {
    convert(Format::F32, B, x.to_bits() as u64, r) as u16
}

/// `cvt.rnd.bf16.f64`: single rounding directly from f64.
pub fn f64_to_bf16(x: f64, r: Rounding) -> u16 {
    convert(Format::F64, B, x.to_bits(), r) as u16
}

/// `cvt.f32.bf16`: exact (`h << 16`). NaN -> canonical f32 NaN (the ISA says
/// "unspecified NaN").
pub fn bf16_to_f32(h: u16) -> f32 {
    let x = f32::from_bits((h as u32) << 16);
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN_F32)
    } else {
        x
    }
}

/// `cvt.f64.bf16`: exact.
pub fn bf16_to_f64(h: u16) -> f64 {
    f64::from_bits(convert(B, Format::F64, h as u64, Rounding::Nearest))
}

/// `cvt.f16.bf16` / `cvt.rnd.bf16.f16`-style conversion between the 16-bit formats.
pub fn bf16_to_f16(h: u16, r: Rounding) -> u16 {
    convert(B, H, h as u64, r) as u16
}

/// `cvt.rnd.bf16.f16`.
pub fn f16_to_bf16(h: u16, r: Rounding) -> u16 {
    convert(H, B, h as u64, r) as u16
}

/// `cvt.rnd.f16.{s,u}{8..64}`: x is the exact integer value.
pub fn int_to_f16(x: i128, r: Rounding) -> u16 {
    int_to_format(H, x, r) as u16
}

/// `cvt.rnd.bf16.{s,u}{8..64}`.
pub fn int_to_bf16(x: i128, r: Rounding) -> u16 {
    int_to_format(B, x, r) as u16
}

/// `cvt.{rni,..}.{s,u}N.f16`: see [`float_to_int_ex`] (NaN -> 0 unless N = 64).
pub fn f16_to_int(h: u16, r: Rounding, signed: bool, bits: u32) -> u64 {
    float_to_int_ex(f16_to_f64(h), FloatSrc::F16, r, false, signed, bits)
}

/// `cvt.{rni,..}.{s,u}N.bf16`.
pub fn bf16_to_int(h: u16, r: Rounding, signed: bool, bits: u32) -> u64 {
    float_to_int_ex(bf16_to_f64(h), FloatSrc::BF16, r, false, signed, bits)
}

/// Flush a subnormal f16 to signed zero.
pub fn flush_f16(h: u16) -> u16 {
    H.flush(h as u64) as u16
}

/// Flush a subnormal bf16 to signed zero.
pub fn flush_bf16(h: u16) -> u16 {
    B.flush(h as u64) as u16
}

fn is_nan16(fmt: Format, h: u16) -> bool {
    fmt.is_nan(h as u64)
}

/// `.sat` for f16: clamp to [0, 1]; NaN and -0 -> +0.
pub fn sat_f16(h: u16) -> u16 {
    sat16(H, h, 0x3c00)
}

/// `.sat` for bf16.
pub fn sat_bf16(h: u16) -> u16 {
    sat16(B, h, 0x3f80)
}

fn sat16(fmt: Format, h: u16, one: u16) -> u16 {
    if is_nan16(fmt, h) || h & 0x8000 != 0 {
        0
    } else if h >= one {
        one
    } else {
        h
    }
}

/// `.relu`: negative values (and -0.0, by assumption) -> +0.0; NaN ->
/// canonical NaN.
pub fn relu_f16(h: u16) -> u16 {
    relu16(H, h)
}

/// `.relu` for bf16.
pub fn relu_bf16(h: u16) -> u16 {
    relu16(B, h)
}

fn relu16(fmt: Format, h: u16) -> u16 {
    if is_nan16(fmt, h) {
        0x7fff
    } else if h & 0x8000 != 0 {
        0
    } else {
        h
    }
}

fn bin16(fmt: Format, a: u16, b: u16, ftz: bool, f: impl Fn(Format, u64, u64) -> u64) -> u16 {
    let (a, b) = if ftz {
        (fmt.flush(a as u64), fmt.flush(b as u64))
    } else {
        (a as u64, b as u64)
    };
    let d = f(fmt, a, b);
    (if ftz { fmt.flush(d) } else { d }) as u16
}

fn fma16(fmt: Format, a: u16, b: u16, c: u16, r: Rounding, ftz: bool) -> u16 {
    let fl = |x: u16| if ftz { fmt.flush(x as u64) } else { x as u64 };
    let d = soft::fma(fmt, fl(a), fl(b), fl(c), r);
    (if ftz { fmt.flush(d) } else { d }) as u16
}

/// `add{.rnd}{.ftz}.f16` (apply [`sat_f16`] for `.sat`).
pub fn add_f16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(H, a, b, ftz, |f, x, y| soft::add(f, x, y, r))
}

/// `sub{.rnd}{.ftz}.f16`.
pub fn sub_f16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(H, a, b, ftz, |f, x, y| soft::sub(f, x, y, r))
}

/// `mul{.rnd}{.ftz}.f16`.
pub fn mul_f16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(H, a, b, ftz, |f, x, y| soft::mul(f, x, y, r))
}

/// `fma.rnd{.ftz}.f16`: single rounding.
pub fn fma_f16(a: u16, b: u16, c: u16, r: Rounding, ftz: bool) -> u16 {
    fma16(H, a, b, c, r, ftz)
}

/// `min{.ftz}{.NaN}.f16`.
pub fn min_f16(a: u16, b: u16, ftz: bool, nan: bool) -> u16 {
    bin16(H, a, b, ftz, |f, x, y| minmax_bits(f, x, y, nan, false))
}

/// `max{.ftz}{.NaN}.f16`.
pub fn max_f16(a: u16, b: u16, ftz: bool, nan: bool) -> u16 {
    bin16(H, a, b, ftz, |f, x, y| minmax_bits(f, x, y, nan, true))
}

/// `neg.f16` / `neg.bf16`: flip the sign bit.
pub fn neg_f16(h: u16) -> u16 {
    h ^ 0x8000
}

/// `abs.f16` / `abs.bf16`: clear the sign bit.
pub fn abs_f16(h: u16) -> u16 {
    h & 0x7fff
}

/// `add.rn.bf16` (ftz accepted for symmetry with f16; PTX has none for bf16).
pub fn add_bf16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(B, a, b, ftz, |f, x, y| soft::add(f, x, y, r))
}

/// `sub.rn.bf16`.
pub fn sub_bf16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(B, a, b, ftz, |f, x, y| soft::sub(f, x, y, r))
}

/// `mul.rn.bf16`.
pub fn mul_bf16(a: u16, b: u16, r: Rounding, ftz: bool) -> u16 {
    bin16(B, a, b, ftz, |f, x, y| soft::mul(f, x, y, r))
}

/// `fma.rn.bf16`: single rounding.
pub fn fma_bf16(a: u16, b: u16, c: u16, r: Rounding, ftz: bool) -> u16 {
    fma16(B, a, b, c, r, ftz)
}

/// `min{.NaN}.bf16`.
pub fn min_bf16(a: u16, b: u16, nan: bool) -> u16 {
    bin16(B, a, b, false, |f, x, y| minmax_bits(f, x, y, nan, false))
}

/// `max{.NaN}.bf16`.
pub fn max_bf16(a: u16, b: u16, nan: bool) -> u16 {
    bin16(B, a, b, false, |f, x, y| minmax_bits(f, x, y, nan, true))
}

/// Apply `f` to each 16-bit half of `a` (low half = element 0).
pub fn f16x2_map(a: u32, f: impl Fn(u16) -> u16) -> u32 {
    (f(a as u16) as u32) | ((f((a >> 16) as u16) as u32) << 16)
}

/// Apply `f` to corresponding halves of `a` and `b`.
pub fn f16x2_map2(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    (f(a as u16, b as u16) as u32) | ((f((a >> 16) as u16, (b >> 16) as u16) as u32) << 16)
}

/// Apply `f` to corresponding halves of `a`, `b`, `c` (e.g. `fma.rn.f16x2`).
pub fn f16x2_map3(a: u32, b: u32, c: u32, f: impl Fn(u16, u16, u16) -> u16) -> u32 {
    (f(a as u16, b as u16, c as u16) as u32)
        | ((f((a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16) as u32) << 16)
}
