//! IEEE-rounded f32 / f64 arithmetic with PTX's rounding modifiers, `.ftz`
//! and `.sat`.
//!
//! * `.rn` uses the host's native IEEE operations (Rust guarantees IEEE
//!   round-to-nearest-even for `+ - * /`, `sqrt` and `mul_add`); the other
//!   directions use the integer soft-float in [`crate::soft`]. Tests check
//!   that both agree on `.rn`.
//! * `ftz = true` flushes subnormal inputs to sign-preserving zero before the
//!   operation and subnormal results after rounding (tininess is detected
//!   after rounding: a result that rounds up to the smallest normal is kept).
//! * NaN results: f32 ops return the canonical NaN `0x7fffffff` (what NVIDIA
//!   GPUs produce; the ISA says "unspecified NaN" for f32). For f64 the PTX ISA
//!   says NaN payloads are supported: a NaN input is propagated (made quiet;
//!   the first NaN among a, b, c wins), and a NaN created by an invalid
//!   operation is the canonical `0x7fffffffffffffff`.

use crate::round::{Format, Rounding};
use crate::soft;

/// Canonical f32 NaN (`0x7fffffff`).
pub const CANONICAL_NAN_F32: u32 = 0x7fff_ffff;
/// Canonical f64 NaN (`0x7fffffffffffffff`).
pub const CANONICAL_NAN_F64: u64 = 0x7fff_ffff_ffff_ffff;

/// Flush an f32 subnormal to sign-preserving zero.
pub fn flush_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// Flush an f64 subnormal to sign-preserving zero.
pub fn flush_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        f64::from_bits(x.to_bits() & 0x8000_0000_0000_0000)
    } else {
        x
    }
}

/// Replace any NaN by the canonical f32 NaN.
pub fn canon_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN_F32)
    } else {
        x
    }
}

/// Replace any NaN by the canonical f64 NaN.
pub fn canon_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(CANONICAL_NAN_F64)
    } else {
        x
    }
}

/// `.sat` for f32: clamp to [0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0.
pub fn sat_f32(x: f32) -> f32 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x
    }
}

/// `.sat` for f64: clamp to [0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0.
pub fn sat_f64(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x
    }
}

#[inline]
fn pre32(x: f32, ftz: bool) -> f32 {
    if ftz {
        flush_f32(x)
    } else {
        x
    }
}

#[inline]
fn post32(x: f32, ftz: bool) -> f32 {
    canon_f32(pre32(x, ftz))
}

#[inline]
fn soft32(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

/// `add.rnd{.ftz}.f32`.
pub fn add_f32(a: f32, b: f32, r: Rounding, ftz: bool) -> f32 {
    let (a, b) = (pre32(a, ftz), pre32(b, ftz));
    let d = match r {
        Rounding::Nearest => a + b,
        _ => soft32(soft::add(
            Format::F32,
            a.to_bits() as u64,
            b.to_bits() as u64,
            r,
        )),
    };
    post32(d, ftz)
}

/// `sub.rnd{.ftz}.f32`.
pub fn sub_f32(a: f32, b: f32, r: Rounding, ftz: bool) -> f32 {
    let (a, b) = (pre32(a, ftz), pre32(b, ftz));
    let d = match r {
        Rounding::Nearest => a - b,
        _ => soft32(soft::sub(
            Format::F32,
            a.to_bits() as u64,
            b.to_bits() as u64,
            r,
        )),
    };
    post32(d, ftz)
}

/// `mul.rnd{.ftz}.f32`.
pub fn mul_f32(a: f32, b: f32, r: Rounding, ftz: bool) -> f32 {
    let (a, b) = (pre32(a, ftz), pre32(b, ftz));
    let d = match r {
        Rounding::Nearest => a * b,
        _ => soft32(soft::mul(
            Format::F32,
            a.to_bits() as u64,
            b.to_bits() as u64,
            r,
        )),
    };
    post32(d, ftz)
}

/// `fma.rnd{.ftz}.f32` (single rounding).
pub fn fma_f32(a: f32, b: f32, c: f32, r: Rounding, ftz: bool) -> f32 {
    let (a, b, c) = (pre32(a, ftz), pre32(b, ftz), pre32(c, ftz));
    let d = match r {
        Rounding::Nearest => a.mul_add(b, c),
        _ => soft32(soft::fma(
            Format::F32,
            a.to_bits() as u64,
            b.to_bits() as u64,
            c.to_bits() as u64,
            r,
        )),
    };
    post32(d, ftz)
}

/// `div.rnd{.ftz}.f32` (IEEE).
pub fn div_f32(a: f32, b: f32, r: Rounding, ftz: bool) -> f32 {
    let (a, b) = (pre32(a, ftz), pre32(b, ftz));
    let d = match r {
        Rounding::Nearest => a / b,
        _ => soft32(soft::div(
            Format::F32,
            a.to_bits() as u64,
            b.to_bits() as u64,
            r,
        )),
    };
    post32(d, ftz)
}

/// `sqrt.rnd{.ftz}.f32` (IEEE). sqrt(-0) = -0, negative -> NaN.
pub fn sqrt_f32(a: f32, r: Rounding, ftz: bool) -> f32 {
    let a = pre32(a, ftz);
    let d = match r {
        Rounding::Nearest => a.sqrt(),
        _ => soft32(soft::sqrt(Format::F32, a.to_bits() as u64, r)),
    };
    post32(d, ftz)
}

/// `rcp.rnd{.ftz}.f32`: 1/a correctly rounded.
pub fn rcp_f32(a: f32, r: Rounding, ftz: bool) -> f32 {
    div_f32(1.0, a, r, ftz)
}

/// Make an f64 NaN quiet, keeping its payload and sign.
pub fn quiet_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | (1 << 51))
}

/// PTX f64 NaN rule: first NaN input propagated (quieted).
#[inline]
fn nan_in_64(xs: &[f64]) -> Option<f64> {
    xs.iter().find(|x| x.is_nan()).map(|&x| quiet_f64(x))
}

#[inline]
fn soft64(bits: u64) -> f64 {
    f64::from_bits(bits)
}

macro_rules! f64_binop {
    ($(#[$m:meta])* $name:ident, $native:expr, $soft:path) => {
        $(#[$m])*
        pub fn $name(a: f64, b: f64, r: Rounding) -> f64 {
            if let Some(n) = nan_in_64(&[a, b]) {
                return n;
            }
            let d = match r {
                Rounding::Nearest => $native(a, b),
                _ => soft64($soft(Format::F64, a.to_bits(), b.to_bits(), r)),
            };
            canon_f64(d)
        }
    };
}

f64_binop!(
    /// `add.rnd.f64`.
    add_f64, |a: f64, b: f64| a + b, soft::add);
f64_binop!(
    /// `sub.rnd.f64`.
    sub_f64, |a: f64, b: f64| a - b, soft::sub);
f64_binop!(
    /// `mul.rnd.f64`.
    mul_f64, |a: f64, b: f64| a * b, soft::mul);
f64_binop!(
    /// `div.rnd.f64`.
    div_f64, |a: f64, b: f64| a / b, soft::div);

/// `fma.rnd.f64` (single rounding).
pub fn fma_f64(a: f64, b: f64, c: f64, r: Rounding) -> f64 {
    if let Some(n) = nan_in_64(&[a, b, c]) {
        return n;
    }
    let d = match r {
        Rounding::Nearest => a.mul_add(b, c),
        _ => soft64(soft::fma(
            Format::F64,
            a.to_bits(),
            b.to_bits(),
            c.to_bits(),
            r,
        )),
    };
    canon_f64(d)
}

/// `sqrt.rnd.f64`.
pub fn sqrt_f64(a: f64, r: Rounding) -> f64 {
    if let Some(n) = nan_in_64(&[a]) {
        return n;
    }
    let d = match r {
        Rounding::Nearest => a.sqrt(),
        _ => soft64(soft::sqrt(Format::F64, a.to_bits(), r)),
    };
    canon_f64(d)
}

/// `rcp.rnd.f64`: 1/a correctly rounded.
pub fn rcp_f64(a: f64, r: Rounding) -> f64 {
    div_f64(1.0, a, r)
}
