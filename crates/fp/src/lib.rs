//! Bit-exact PTX floating-point semantics for warpfold's reference
//! interpreter: IEEE rounding modes (`.rn .rz .rm .rp`, `.rni .rzi .rmi
//! .rpi`), `.ftz`, `.sat`, `min`/`max` NaN rules, `cvt` (float/float,
//! float/int with saturation, integral rounding), f16/bf16 and `.approx`
//! operations.
//!
//! Module map (one concept each):
//! * `round`: formats, decoding, the single rounding routine;
//! * `soft`: correctly rounded add/sub/mul/fma/div/sqrt on any format;
//! * `arith`: f32/f64 arithmetic with rounding, `.ftz`, `.sat`;
//! * `minmax`: `min`/`max`;
//! * `classify`: `testp`, `copysign`, `abs`, `neg`;
//! * `convert`: `cvt` between f32/f64/integers;
//! * `half`: f16/bf16 conversions and arithmetic, f16x2 helpers;
//! * `approx`: `.approx` / `.full` instructions.
//!
//! NaN policy: NVIDIA GPUs produce the canonical NaN (all bits but the sign
//! set) from f32/f16/bf16 arithmetic; f64 arithmetic propagates an input NaN's
//! payload (PTX ISA: "NaN payloads are supported for double-precision
//! instructions") and produces `0x7fffffffffffffff` for invalid operations.

pub mod approx;
pub mod arith;
pub mod classify;
pub mod convert;
pub mod half;
pub mod minmax;
pub mod round;
pub mod soft;

pub use approx::*;
pub use arith::*;
pub use classify::*;
pub use convert::*;
pub use half::*;
pub use minmax::*;
pub use round::{next_down, next_up, Format, Rounding};
