//! `min` / `max` with PTX NaN rules:
//! * one NaN input: the other input is returned;
//! * both NaN, or any NaN with the `.NaN` modifier: canonical NaN;
//! * `-0.0 < +0.0`;
//! * `.ftz` flushes subnormal inputs (and so the result).
//!
//! `.xorsign.abs` (f32, f16, bf16): operate on |a|, |b| and give the result the
//! XOR of the input signs, unless the result is NaN.

use crate::arith::{flush_f32, CANONICAL_NAN_F32};
use crate::round::Format;

/// Generic min/max on bit patterns of `fmt` (no flushing). `want_max` picks max.
pub fn minmax_bits(fmt: Format, a: u64, b: u64, nan: bool, want_max: bool) -> u64 {
    let an = fmt.is_nan(a);
    let bn = fmt.is_nan(b);
    if (an && bn) || (nan && (an || bn)) {
        return fmt.canonical_nan();
    }
    if an {
        return b;
    }
    if bn {
        return a;
    }
    // Total order on non-NaN values with -0 < +0: map to a signed key.
    let key = |x: u64| -> i128 {
        let mag = (x & !fmt.sign_mask()) as i128;
        if fmt.sign(x) {
            -mag - 1
        } else {
            mag
        }
    };
    let a_less = key(a) < key(b);
    if a_less != want_max {
        a
    } else {
        b
    }
}

/// `min{.ftz}{.NaN}.f32`.
pub fn min_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    mm32(a, b, ftz, nan, false)
}

/// `max{.ftz}{.NaN}.f32`.
pub fn max_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    mm32(a, b, ftz, nan, true)
}

fn mm32(a: f32, b: f32, ftz: bool, nan: bool, want_max: bool) -> f32 {
    let (a, b) = if ftz {
        (flush_f32(a), flush_f32(b))
    } else {
        (a, b)
    };
    let d = minmax_bits(
        Format::F32,
        a.to_bits() as u64,
        b.to_bits() as u64,
        nan,
        want_max,
    );
    f32::from_bits(d as u32)
}

/// `min{.ftz}{.NaN}.xorsign.abs.f32`.
pub fn min_xorsign_abs_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    xorsign_abs32(a, b, ftz, nan, false)
}

/// `max{.ftz}{.NaN}.xorsign.abs.f32`.
pub fn max_xorsign_abs_f32(a: f32, b: f32, ftz: bool, nan: bool) -> f32 {
    xorsign_abs32(a, b, ftz, nan, true)
}

fn xorsign_abs32(a: f32, b: f32, ftz: bool, nan: bool, want_max: bool) -> f32 {
    let (a, b) = if ftz {
        (flush_f32(a), flush_f32(b))
    } else {
        (a, b)
    };
    let s = (a.to_bits() ^ b.to_bits()) & 0x8000_0000;
    let d = mm32(a.abs(), b.abs(), false, nan, want_max);
    if d.is_nan() {
        f32::from_bits(CANONICAL_NAN_F32)
    } else {
        f32::from_bits(d.to_bits() | s)
    }
}

/// `min.f64` (no `.ftz` / `.NaN` in PTX for f64). Both NaN -> canonical NaN.
pub fn min_f64(a: f64, b: f64) -> f64 {
    f64::from_bits(minmax_bits(
        Format::F64,
        a.to_bits(),
        b.to_bits(),
        false,
        false,
    ))
}

/// `max.f64`.
pub fn max_f64(a: f64, b: f64) -> f64 {
    f64::from_bits(minmax_bits(
        Format::F64,
        a.to_bits(),
        b.to_bits(),
        false,
        true,
    ))
}

/// min/max for f64 with the `.NaN` rule available (for completeness).
pub fn minmax_f64_nan(a: f64, b: f64, nan: bool, want_max: bool) -> f64 {
    let d = minmax_bits(Format::F64, a.to_bits(), b.to_bits(), nan, want_max);
    f64::from_bits(d)
}
