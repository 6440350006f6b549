//! `.approx` instructions. Each result is computed in f64 (or exactly) and
//! rounded once, so it is far inside the error the PTX ISA allows; the bound
//! the ISA states is recorded on each function and tested in
//! `tests/approx.rs`. NaN results are the canonical NaN. `ftz` flushes
//! subnormal inputs and results.
//!
//! These are *not* bit-identical to the GPU's hardware approximations (the
//! ISA does not define those bits); they are the most accurate cheap choice.

use crate::arith::{canon_f32, div_f32, flush_f32, sqrt_f32, CANONICAL_NAN_F32};
use crate::round::{round_pack, unpack, Class, Format, Rounding};
use crate::soft;

#[inline]
fn pre(x: f32, ftz: bool) -> f32 {
    if ftz {
        flush_f32(x)
    } else {
        x
    }
}

#[inline]
fn post(x: f32, ftz: bool) -> f32 {
    canon_f32(pre(x, ftz))
}

/// `ex2.approx{.ftz}.f32`: 2^x. ISA bound: max 2 ulp from the correctly
/// rounded result, full range. -inf -> +0, ±0 -> 1, +inf -> +inf.
pub fn ex2_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    post((x as f64).exp2() as f32, ftz)
}

/// `lg2.approx{.ftz}.f32`: log2(x). ISA bound: absolute error 2^-22 for x in
/// (0.5, 2), relative error 2^-22 elsewhere. Negative (incl. -inf) -> NaN,
/// ±0 -> -inf, +inf -> +inf.
pub fn lg2_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    post((x as f64).log2() as f32, ftz)
}

/// `sin.approx{.ftz}.f32`. ISA bound: absolute error 2^-20.5 on [-2π, 2π],
/// 2^-14.7 on [-100π, 100π]; best effort beyond. ±inf -> NaN, ±0 -> ±0.
pub fn sin_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    post((x as f64).sin() as f32, ftz)
}

/// `cos.approx{.ftz}.f32`. Same bounds as sin. ±inf -> NaN, ±0 -> 1.
pub fn cos_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    post((x as f64).cos() as f32, ftz)
}

/// `rcp.approx{.ftz}.f32`: ISA bound 1 ulp; we return the correctly rounded
/// reciprocal. ±0 -> ±inf, ±inf -> ±0.
pub fn rcp_approx_f32(x: f32, ftz: bool) -> f32 {
    div_f32(1.0, x, Rounding::Nearest, ftz)
}

/// `sqrt.approx{.ftz}.f32`: ISA bound relative error 2^-23; we return the
/// correctly rounded root. -0 -> -0, negative -> NaN, +inf -> +inf.
pub fn sqrt_approx_f32(x: f32, ftz: bool) -> f32 {
    sqrt_f32(x, Rounding::Nearest, ftz)
}

/// `rsqrt.approx{.ftz}.f32`: 1/sqrt(x). ISA bound: relative error 2^-22.9.
/// We give the f32 square root, rounded, then its reciprocal, rounded: two
/// half-ulp errors, relative error < 2^-23 (inside the bound), and two
/// vector instructions in compiled code. -0 -> -inf (sqrt(-0) = -0),
/// +0 -> +inf, negative -> NaN, +inf -> +0.
pub fn rsqrt_approx_f32(x: f32, ftz: bool) -> f32 {
    let x = pre(x, ftz);
    post(1.0 / x.sqrt(), ftz)
}

/// `tanh.approx.f32`. ISA bound: relative error 2^-11 over the whole range.
/// ±inf -> ±1, ±0 -> ±0, subnormals pass through (no `.ftz` form).
pub fn tanh_approx_f32(x: f32) -> f32 {
    canon_f32((x as f64).tanh() as f32)
}

/// `div.approx{.ftz}.f32`: computed by the GPU as `a * (1/b)`. ISA: max
/// 2 ulp for |b| in [2^-126, 2^126]; for 2^126 < |b| < 2^128 the result is
/// NaN if a is infinite, else a sign-preserving zero (the reciprocal
/// underflows). We give: the correctly rounded quotient for |b| in range,
/// that special case for huge |b|, and `a * (1/b)` (reciprocal rounded to
/// f32 first) for subnormal b, where the ISA gives no bound.
pub fn div_approx_f32(a: f32, b: f32, ftz: bool) -> f32 {
    let (a, b) = (pre(a, ftz), pre(b, ftz));
    let ab = b.abs();
    if ab.is_finite() && ab > 2f32.powi(126) {
        if a.is_infinite() {
            return f32::from_bits(CANONICAL_NAN_F32);
        }
        if a.is_nan() {
            return f32::from_bits(CANONICAL_NAN_F32);
        }
        let s = (a.to_bits() ^ b.to_bits()) & 0x8000_0000;
        return f32::from_bits(s);
    }
    if b.is_subnormal() {
        let r = 1.0 / b;
        return post(a * r, ftz);
    }
    div_f32(a, b, Rounding::Nearest, ftz)
}

/// `div.full{.ftz}.f32`: ISA bound 2 ulp over the full range; we return the
/// correctly rounded quotient.
pub fn div_full_f32(a: f32, b: f32, ftz: bool) -> f32 {
    div_f32(a, b, Rounding::Nearest, ftz)
}

const HI: Format = Format::F64_HI;
const NAN_HI64: u64 = 0x7fff_ffff_0000_0000;

/// Apply `f` (exact function on the 1.11.20 upper word, rounded once to
/// 1.11.20 with ties-to-even) per the `.approx.ftz.f64` definitions: only the
/// upper 32 bits of `x` are used, the result's lower 32 bits are zero,
/// subnormal inputs/results flush to signed zero, NaN -> 0x7fffffff00000000.
fn hi_word_op(x: f64, f: impl Fn(u64) -> u64) -> f64 {
    let hi = HI.flush(x.to_bits() >> 32);
    let d = f(hi);
    if HI.is_nan(d) {
        return f64::from_bits(NAN_HI64);
    }
    f64::from_bits(HI.flush(d) << 32)
}

/// `rcp.approx.ftz.f64`: reciprocal of the upper word (1.11.20) of `x`,
/// result in the upper word, lower 32 bits zero. The ISA calls it a "gross
/// approximation" and gives no bound; we round the exact reciprocal of the
/// truncated input to nearest in 1.11.20, i.e. relative error <= 2^-21 w.r.t.
/// the truncated input (<= ~2^-20 w.r.t. `x`). ±subnormal, ±0 -> ±inf,
/// ±inf -> ±0.
pub fn rcp_approx_ftz_f64(x: f64) -> f64 {
    hi_word_op(x, |h| soft::rcp(HI, h, Rounding::Nearest))
}

/// `rsqrt.approx.ftz.f64`: 1/sqrt of the upper word, same layout rules as
/// [`rcp_approx_ftz_f64`]. ±subnormal, ±0 -> ±inf, +inf -> +0, negative -> NaN.
pub fn rsqrt_approx_ftz_f64(x: f64) -> f64 {
    hi_word_op(x, |h| match unpack(HI, h) {
        Class::Nan => HI.canonical_nan(),
        Class::Zero(s) => HI.inf(s),
        Class::Inf(false) => 0,
        Class::Inf(true) | Class::Finite { sign: true, .. } => HI.canonical_nan(),
        Class::Finite { .. } => {
            let v = f64::from_bits(h << 32);
            let r = 1.0 / v.sqrt();
            let Class::Finite { sign, mant, exp } = unpack(Format::F64, r.to_bits()) else {
                return HI.canonical_nan();
            };
            round_pack(HI, sign, mant as u128, exp, false, Rounding::Nearest)
        }
    })
}

/// `rsqrt.approx.f64`: 1/sqrt(x) in full f64 (the ISA says it is emulated in
/// software and gives no bound; ours is sqrt then divide, each correctly
/// rounded: < 1.5 ulp). -0 -> -inf, +0 -> +inf, negative -> NaN, +inf -> +0.
/// NaN input -> canonical NaN.
pub fn rsqrt_approx_f64(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::from_bits(crate::arith::CANONICAL_NAN_F64);
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    1.0 / x.sqrt()
}
