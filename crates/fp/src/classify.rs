//! `testp`, `copysign`, `abs`, `neg`.

use crate::arith::flush_f32;

/// Property tested by `testp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestP {
    /// Not infinite and not NaN.
    Finite,
    /// +inf or -inf.
    Infinite,
    /// Not NaN.
    Number,
    /// NaN.
    NotANumber,
    /// Normal number; per the PTX ISA, +0.0 and -0.0 count as normal.
    Normal,
    /// Subnormal (nonzero) number.
    Subnormal,
}

/// `testp.op.f32`.
pub fn testp_f32(x: f32, t: TestP) -> bool {
    match t {
        TestP::Finite => x.is_finite(),
        TestP::Infinite => x.is_infinite(),
        TestP::Number => !x.is_nan(),
        TestP::NotANumber => x.is_nan(),
        TestP::Normal => x.is_normal() || x == 0.0,
        TestP::Subnormal => x.is_subnormal(),
    }
}

/// `testp.op.f64`.
pub fn testp_f64(x: f64, t: TestP) -> bool {
    match t {
        TestP::Finite => x.is_finite(),
        TestP::Infinite => x.is_infinite(),
        TestP::Number => !x.is_nan(),
        TestP::NotANumber => x.is_nan(),
        TestP::Normal => x.is_normal() || x == 0.0,
        TestP::Subnormal => x.is_subnormal(),
    }
}

/// `copysign.f32 d, a, b`: the PTX ISA says "copy sign bit of a into value of
/// b": d = |b| with the sign of **a** (note the operand order, opposite to C's
/// `copysign(x, y)`). Pure bit operation (NaN payloads kept).
pub fn copysign_f32(a: f32, b: f32) -> f32 {
    f32::from_bits((b.to_bits() & 0x7fff_ffff) | (a.to_bits() & 0x8000_0000))
}

/// `copysign.f64 d, a, b`: |b| with the sign of a.
pub fn copysign_f64(a: f64, b: f64) -> f64 {
    const S: u64 = 0x8000_0000_0000_0000;
    f64::from_bits((b.to_bits() & !S) | (a.to_bits() & S))
}

/// `abs{.ftz}.f32`. NaN input: the ISA says "unspecified NaN"; we clear the
/// sign bit and keep the payload.
pub fn abs_f32(a: f32, ftz: bool) -> f32 {
    let a = if ftz { flush_f32(a) } else { a };
    f32::from_bits(a.to_bits() & 0x7fff_ffff)
}

/// `neg{.ftz}.f32`: flips the sign bit (NaN payload kept).
pub fn neg_f32(a: f32, ftz: bool) -> f32 {
    let a = if ftz { flush_f32(a) } else { a };
    f32::from_bits(a.to_bits() ^ 0x8000_0000)
}

/// `abs.f64`: clears the sign bit.
pub fn abs_f64(a: f64) -> f64 {
    f64::from_bits(a.to_bits() & 0x7fff_ffff_ffff_ffff)
}

/// `neg.f64`: flips the sign bit.
pub fn neg_f64(a: f64) -> f64 {
    f64::from_bits(a.to_bits() ^ 0x8000_0000_0000_0000)
}
