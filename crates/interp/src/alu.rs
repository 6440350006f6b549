//! Value semantics of the non-memory, non-collective instructions: pure
//! functions from operand bits to result bits. Registers hold raw bits; each
//! operation reads the width its type says and writes a result zero-extended
//! to 64 bits (sign-extended where PTX sign-extends, e.g. signed loads).

use warpfold_fp as fp;
use warpfold_ir::*;

pub fn zx(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

pub fn sx(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// The operand's value as a wide integer, per the signedness of `ty`.
fn wide(v: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        i128::from(sx(v, ty.bits()))
    } else {
        i128::from(zx(v, ty.bits()))
    }
}

fn rnd(r: Round) -> fp::Rounding {
    match r {
        Round::Nearest => fp::Rounding::Nearest,
        Round::Zero => fp::Rounding::Zero,
        Round::Down => fp::Rounding::Down,
        Round::Up => fp::Rounding::Up,
    }
}

/// Integer operations. Division by zero does not trap on a GPU; we give the
/// all-ones quotient and the dividend as remainder, like the hardware.
pub fn int_op(op: IntOp, ty: Ty, a: &[u64]) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let x = |i: usize| wide(a[i], ty);
    let u = |i: usize| zx(a[i], bits);
    let r = match op {
        IntOp::Add => x(0).wrapping_add(x(1)),
        IntOp::Sub => x(0).wrapping_sub(x(1)),
        IntOp::AddSat | IntOp::SubSat => {
            let v = if op == IntOp::AddSat {
                x(0) + x(1)
            } else {
                x(0) - x(1)
            };
            clamp_to(v, bits, signed)
        }
        IntOp::MulLo => x(0).wrapping_mul(x(1)),
        IntOp::MulHi => x(0).wrapping_mul(x(1)) >> bits,
        IntOp::MulWide => return zx((x(0) * x(1)) as u64, bits * 2),
        IntOp::Mul24Lo | IntOp::Mul24Hi | IntOp::Mad24Lo | IntOp::Mad24Hi => {
            let m24 = |v: u64| {
                if signed {
                    i128::from(sx(v, 24))
                } else {
                    i128::from(zx(v, 24))
                }
            };
            let p = m24(a[0]) * m24(a[1]);
            // .hi gives bits 16..47 of the 48-bit product.
            let base = if matches!(op, IntOp::Mul24Hi | IntOp::Mad24Hi) {
                p >> 16
            } else {
                p
            };
            if matches!(op, IntOp::Mad24Lo | IntOp::Mad24Hi) {
                base.wrapping_add(x(2))
            } else {
                base
            }
        }
        IntOp::MadLo => x(0).wrapping_mul(x(1)).wrapping_add(x(2)),
        IntOp::MadHi => (x(0).wrapping_mul(x(1)) >> bits).wrapping_add(x(2)),
        IntOp::MadHiSat => {
            // mad.hi.sat.s32: saturate (a*b)>>32 + c to s32.
            let v = ((x(0) * x(1)) >> bits) + x(2);
            clamp_to(v, bits, true)
        }
        IntOp::MadWide => {
            let w = ty.widened();
            return zx((x(0) * x(1)).wrapping_add(wide(a[2], w)) as u64, bits * 2);
        }
        IntOp::Sad => (x(0) - x(1)).abs().wrapping_add(x(2)),
        IntOp::Div => {
            if x(1) == 0 {
                -1
            } else if signed && x(1) == -1 {
                x(0).wrapping_neg()
            } else {
                x(0) / x(1)
            }
        }
        IntOp::Rem => {
            if x(1) == 0 {
                x(0)
            } else if signed && x(1) == -1 {
                0
            } else {
                x(0) % x(1)
            }
        }
        IntOp::Min => x(0).min(x(1)),
        IntOp::Max => x(0).max(x(1)),
        IntOp::Abs => x(0).abs(),
        IntOp::Neg => x(0).wrapping_neg(),
        IntOp::And => return zx(a[0] & a[1], bits),
        IntOp::Or => return zx(a[0] | a[1], bits),
        IntOp::Xor => return zx(a[0] ^ a[1], bits),
        IntOp::Not => return zx(!a[0], bits),
        IntOp::CNot => return u64::from(u(0) == 0),
        IntOp::Shl => {
            let s = zx(a[1], 32);
            return if s >= u64::from(bits) {
                0
            } else {
                zx(u(0) << s, bits)
            };
        }
        IntOp::Shr => {
            let s = zx(a[1], 32).min(u64::from(bits) - 1 + u64::from(!signed));
            if signed {
                x(0) >> s.min(127)
            } else if s >= u64::from(bits) {
                0
            } else {
                i128::from(u(0) >> s)
            }
        }
        IntOp::Popc => return u64::from(u(0).count_ones()),
        IntOp::Clz => return u64::from(u(0).leading_zeros() - (64 - bits)),
        IntOp::Brev => return zx(u(0).reverse_bits() >> (64 - bits), bits),
        IntOp::Bfind { shiftamt } => {
            // Most significant bit that differs from the sign (signed) or is set.
            let v = if signed && sx(a[0], bits) < 0 {
                zx(!a[0], bits)
            } else {
                u(0)
            };
            if v == 0 {
                return 0xffff_ffff;
            }
            let pos = 63 - v.leading_zeros();
            return u64::from(if shiftamt { bits - 1 - pos } else { pos });
        }
        IntOp::Bfe => {
            let pos = zx(a[1], 8) as u32;
            let len = zx(a[2], 8) as u32;
            let v = u(0);
            // The sign bit for signed extracts: the field's top bit, or the
            // source's sign when the field starts past the end.
            let sbit = if signed && len > 0 {
                let at = (pos + len - 1).min(bits - 1);
                (v >> at) & 1 == 1
            } else {
                false
            };
            let mut out: u64 = 0;
            for i in 0..bits {
                let bit = if i < len && pos + i < bits {
                    (v >> (pos + i)) & 1 == 1
                } else if i < len {
                    sbit && signed
                } else {
                    sbit
                };
                if bit {
                    out |= 1 << i;
                }
            }
            if len == 0 {
                out = 0;
            }
            return zx(out, bits);
        }
        IntOp::Bfi => {
            let pos = zx(a[2], 8) as u32;
            let len = zx(a[3], 8) as u32;
            let mut out = u(1);
            for i in 0..len {
                if pos + i >= bits {
                    break;
                }
                let bit = (u(0) >> i) & 1;
                out = (out & !(1 << (pos + i))) | (bit << (pos + i));
            }
            return out;
        }
        IntOp::Prmt(mode) => {
            return prmt(
                zx(a[0], 32) as u32,
                zx(a[1], 32) as u32,
                zx(a[2], 32) as u32,
                mode,
            )
            .into()
        }
        IntOp::Shf { left, clamp } => {
            let (lo, hi) = (zx(a[0], 32), zx(a[1], 32));
            let mut n = zx(a[2], 32);
            n = if clamp { n.min(32) } else { n & 31 };
            let both = (hi << 32) | lo;
            return if left {
                zx((both << n) >> 32, 32)
            } else {
                zx(both >> n, 32)
            };
        }
        IntOp::Lop3(lut) => {
            let (p, q, s) = (u(0), u(1), u(2));
            let mut out = 0u64;
            for i in 0..bits {
                let idx = (((p >> i) & 1) << 2) | (((q >> i) & 1) << 1) | ((s >> i) & 1);
                out |= u64::from((lut >> idx) & 1) << i;
            }
            return out;
        }
        IntOp::Dp4a { a_signed, b_signed } => {
            let (p, q) = (zx(a[0], 32), zx(a[1], 32));
            let byte = |v: u64, i: u32, s: bool| -> i128 {
                let b = (v >> (8 * i)) & 0xff;
                if s {
                    i128::from(sx(b, 8))
                } else {
                    i128::from(b)
                }
            };
            let mut acc = wide(
                a[2],
                if a_signed || b_signed {
                    Ty::S32
                } else {
                    Ty::U32
                },
            );
            for i in 0..4 {
                acc += byte(p, i, a_signed) * byte(q, i, b_signed);
            }
            acc
        }
        IntOp::Dp2a {
            a_signed,
            b_signed,
            hi,
        } => {
            let (p, q) = (zx(a[0], 32), zx(a[1], 32));
            let half = |v: u64, i: u32, s: bool| -> i128 {
                let h = (v >> (16 * i)) & 0xffff;
                if s {
                    i128::from(sx(h, 16))
                } else {
                    i128::from(h)
                }
            };
            let byte = |v: u64, i: u32, s: bool| -> i128 {
                let b = (v >> (8 * i)) & 0xff;
                if s {
                    i128::from(sx(b, 8))
                } else {
                    i128::from(b)
                }
            };
            let mut acc = wide(
                a[2],
                if a_signed || b_signed {
                    Ty::S32
                } else {
                    Ty::U32
                },
            );
            let base = if hi { 2 } else { 0 };
            for i in 0..2 {
                acc += half(p, i, a_signed) * byte(q, base + i, b_signed);
            }
            acc
        }
    };
    zx(r as u64, bits)
}

fn clamp_to(v: i128, bits: u32, signed: bool) -> i128 {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    v.clamp(lo, hi)
}

/// `prmt`: pick bytes of {b, a} by selector nibbles (or a fixed mode).
pub fn prmt(a: u32, b: u32, c: u32, mode: PrmtMode) -> u32 {
    let bytes = (u64::from(b) << 32) | u64::from(a);
    let byte = |i: u32| ((bytes >> (8 * (i & 7))) & 0xff) as u32;
    let sel: [u32; 4] = match mode {
        PrmtMode::Default => {
            let mut out = 0u32;
            for i in 0..4 {
                let s = (c >> (4 * i)) & 0xf;
                let mut v = byte(s & 7);
                if s & 8 != 0 {
                    // Replicate the sign bit of the selected byte.
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                out |= v << (8 * i);
            }
            return out;
        }
        PrmtMode::F4e => {
            let s = c & 3;
            [s, s + 1, s + 2, s + 3]
        }
        PrmtMode::B4e => {
            let s = c & 3;
            [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7]
        }
        PrmtMode::Rc8 => {
            let s = c & 3;
            [s, s, s, s]
        }
        PrmtMode::Ecl => {
            let s = c & 3;
            [s, if s > 1 { s } else { 1 }, if s > 2 { s } else { 2 }, 3]
        }
        PrmtMode::Ecr => {
            let s = c & 3;
            [0, if s > 1 { 1 } else { s }, if s > 2 { 2 } else { s }, s]
        }
        PrmtMode::Rc16 => {
            let s = c & 1;
            [2 * s, 2 * s + 1, 2 * s, 2 * s + 1]
        }
    };
    let mut out = 0u32;
    for (i, s) in sel.iter().enumerate() {
        out |= byte(*s) << (8 * i);
    }
    out
}

fn f32v(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

fn f64v(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Float operations on f16/bf16 (u16 bits), f16x2/bf16x2, f32 and f64.
pub fn float_op(op: FloatOp, ty: Ty, a: &[u64], round: Round, ftz: bool, sat: bool) -> u64 {
    let r = rnd(round);
    match ty {
        Ty::F32 => {
            let x = |i: usize| f32v(a[i]);
            let v = match op {
                FloatOp::Add => fp::add_f32(x(0), x(1), r, ftz),
                FloatOp::Sub => fp::sub_f32(x(0), x(1), r, ftz),
                FloatOp::Mul => fp::mul_f32(x(0), x(1), r, ftz),
                FloatOp::Fma => fp::fma_f32(x(0), x(1), x(2), r, ftz),
                FloatOp::Div(FloatKind::Rounded(dr)) => fp::div_f32(x(0), x(1), rnd(dr), ftz),
                FloatOp::Div(FloatKind::Approx) => fp::div_approx_f32(x(0), x(1), ftz),
                FloatOp::Div(FloatKind::Full) => fp::div_full_f32(x(0), x(1), ftz),
                FloatOp::Sqrt(FloatKind::Rounded(dr)) => fp::sqrt_f32(x(0), rnd(dr), ftz),
                FloatOp::Sqrt(_) => fp::sqrt_approx_f32(x(0), ftz),
                FloatOp::Rcp(FloatKind::Rounded(dr)) => fp::rcp_f32(x(0), rnd(dr), ftz),
                FloatOp::Rcp(_) => fp::rcp_approx_f32(x(0), ftz),
                FloatOp::Rsqrt => fp::rsqrt_approx_f32(x(0), ftz),
                FloatOp::Ex2 => fp::ex2_approx_f32(x(0), ftz),
                FloatOp::Lg2 => fp::lg2_approx_f32(x(0), ftz),
                FloatOp::Sin => fp::sin_approx_f32(x(0), ftz),
                FloatOp::Cos => fp::cos_approx_f32(x(0), ftz),
                FloatOp::Tanh => fp::tanh_approx_f32(x(0)),
                FloatOp::Min { nan } => fp::min_f32(x(0), x(1), ftz, nan),
                FloatOp::Max { nan } => fp::max_f32(x(0), x(1), ftz, nan),
                FloatOp::Abs => fp::abs_f32(x(0), ftz),
                FloatOp::Neg => fp::neg_f32(x(0), ftz),
                FloatOp::Copysign => fp::copysign_f32(x(0), x(1)),
            };
            let v = if sat { fp::sat_f32(v) } else { v };
            u64::from(v.to_bits())
        }
        Ty::F64 => {
            let x = |i: usize| f64v(a[i]);
            let v = match op {
                FloatOp::Add => fp::add_f64(x(0), x(1), r),
                FloatOp::Sub => fp::sub_f64(x(0), x(1), r),
                FloatOp::Mul => fp::mul_f64(x(0), x(1), r),
                FloatOp::Fma => fp::fma_f64(x(0), x(1), x(2), r),
                FloatOp::Div(FloatKind::Rounded(dr)) => fp::div_f64(x(0), x(1), rnd(dr)),
                FloatOp::Div(_) => fp::div_f64(x(0), x(1), fp::Rounding::Nearest),
                FloatOp::Sqrt(FloatKind::Rounded(dr)) => fp::sqrt_f64(x(0), rnd(dr)),
                FloatOp::Sqrt(_) => fp::sqrt_f64(x(0), fp::Rounding::Nearest),
                FloatOp::Rcp(FloatKind::Rounded(dr)) => fp::rcp_f64(x(0), rnd(dr)),
                FloatOp::Rcp(_) => fp::rcp_approx_ftz_f64(x(0)),
                FloatOp::Rsqrt => {
                    if ftz {
                        fp::rsqrt_approx_ftz_f64(x(0))
                    } else {
                        fp::rsqrt_approx_f64(x(0))
                    }
                }
                FloatOp::Ex2 => x(0).exp2(),
                FloatOp::Lg2 => x(0).log2(),
                FloatOp::Sin => x(0).sin(),
                FloatOp::Cos => x(0).cos(),
                FloatOp::Tanh => x(0).tanh(),
                FloatOp::Min { nan } => fp::minmax_f64_nan(x(0), x(1), nan, false),
                FloatOp::Max { nan } => fp::minmax_f64_nan(x(0), x(1), nan, true),
                FloatOp::Abs => fp::abs_f64(x(0)),
                FloatOp::Neg => fp::neg_f64(x(0)),
                FloatOp::Copysign => fp::copysign_f64(x(0), x(1)),
            };
            let v = if sat { fp::sat_f64(v) } else { v };
            v.to_bits()
        }
        Ty::F16 | Ty::BF16 => u64::from(half_op(op, ty == Ty::BF16, a, r, ftz, sat)),
        Ty::F16x2 | Ty::BF16x2 => {
            let bf = ty == Ty::BF16x2;
            let lane = |shift: u32| {
                let parts: Vec<u64> = a.iter().map(|v| (v >> shift) & 0xffff).collect();
                u64::from(half_op(op, bf, &parts, r, ftz, sat))
            };
            lane(0) | (lane(16) << 16)
        }
        _ => 0,
    }
}

/// One f16 or bf16 operation on u16 bits. Operations without a native
/// half-precision definition (the `.approx` functions) go through f32.
fn half_op(op: FloatOp, bf: bool, a: &[u64], r: fp::Rounding, ftz: bool, sat: bool) -> u16 {
    let h = |i: usize| a[i] as u16;
    let to32 = |x: u16| {
        if bf {
            fp::bf16_to_f32(x)
        } else {
            fp::f16_to_f32(x)
        }
    };
    let from32 = |x: f32| {
        if bf {
            fp::f32_to_bf16(x, fp::Rounding::Nearest)
        } else {
            fp::f32_to_f16(x, fp::Rounding::Nearest)
        }
    };
    let v = match (op, bf) {
        (FloatOp::Add, false) => fp::add_f16(h(0), h(1), r, ftz),
        (FloatOp::Sub, false) => fp::sub_f16(h(0), h(1), r, ftz),
        (FloatOp::Mul, false) => fp::mul_f16(h(0), h(1), r, ftz),
        (FloatOp::Fma, false) => fp::fma_f16(h(0), h(1), h(2), r, ftz),
        (FloatOp::Add, true) => fp::add_bf16(h(0), h(1), r, ftz),
        (FloatOp::Sub, true) => fp::sub_bf16(h(0), h(1), r, ftz),
        (FloatOp::Mul, true) => fp::mul_bf16(h(0), h(1), r, ftz),
        (FloatOp::Fma, true) => fp::fma_bf16(h(0), h(1), h(2), r, ftz),
        (FloatOp::Min { nan }, false) => fp::min_f16(h(0), h(1), ftz, nan),
        (FloatOp::Max { nan }, false) => fp::max_f16(h(0), h(1), ftz, nan),
        (FloatOp::Min { nan }, true) => fp::min_bf16(h(0), h(1), nan),
        (FloatOp::Max { nan }, true) => fp::max_bf16(h(0), h(1), nan),
        (FloatOp::Neg, false) => fp::neg_f16(h(0)),
        (FloatOp::Abs, false) => fp::abs_f16(h(0)),
        (FloatOp::Neg, _) => h(0) ^ 0x8000,
        (FloatOp::Abs, _) => h(0) & 0x7fff,
        (FloatOp::Ex2, _) => from32(fp::ex2_approx_f32(to32(h(0)), ftz)),
        (FloatOp::Tanh, _) => from32(fp::tanh_approx_f32(to32(h(0)))),
        (other, _) => {
            // Remaining ops are not defined on halves by PTX; compute in f32.
            let args: Vec<u64> = (0..a.len())
                .map(|i| u64::from(to32(h(i)).to_bits()))
                .collect();
            from32(f32v(float_op(
                other,
                Ty::F32,
                &args,
                Round::Nearest,
                ftz,
                false,
            )))
        }
    };
    if sat {
        if bf {
            fp::sat_bf16(v)
        } else {
            fp::sat_f16(v)
        }
    } else {
        v
    }
}

/// Comparison of two values of `ty`.
pub fn compare(cmp: CmpOp, ty: Ty, a: u64, b: u64, ftz: bool) -> bool {
    if ty.is_float() {
        let (x, y) = match ty {
            Ty::F32 => {
                let (mut x, mut y) = (f64::from(f32v(a)), f64::from(f32v(b)));
                if ftz {
                    x = f64::from(fp::flush_f32(f32v(a)));
                    y = f64::from(fp::flush_f32(f32v(b)));
                }
                (x, y)
            }
            Ty::F64 => (f64v(a), f64v(b)),
            Ty::F16 => (
                f64::from(fp::f16_to_f32(a as u16)),
                f64::from(fp::f16_to_f32(b as u16)),
            ),
            Ty::BF16 => (
                f64::from(fp::bf16_to_f32(a as u16)),
                f64::from(fp::bf16_to_f32(b as u16)),
            ),
            _ => (f64v(a), f64v(b)),
        };
        let unordered = x.is_nan() || y.is_nan();
        return match cmp {
            CmpOp::Eq => !unordered && x == y,
            CmpOp::Ne => !unordered && x != y,
            CmpOp::Lt | CmpOp::Lo => !unordered && x < y,
            CmpOp::Le | CmpOp::Ls => !unordered && x <= y,
            CmpOp::Gt | CmpOp::Hi => !unordered && x > y,
            CmpOp::Ge | CmpOp::Hs => !unordered && x >= y,
            CmpOp::Equ => unordered || x == y,
            CmpOp::Neu => unordered || x != y,
            CmpOp::Ltu => unordered || x < y,
            CmpOp::Leu => unordered || x <= y,
            CmpOp::Gtu => unordered || x > y,
            CmpOp::Geu => unordered || x >= y,
            CmpOp::Num => !unordered,
            CmpOp::Nan => unordered,
        };
    }
    let bits = ty.bits();
    let (sa, sb) = (sx(a, bits), sx(b, bits));
    let (ua, ub) = (zx(a, bits), zx(b, bits));
    let signed = ty.is_signed();
    match cmp {
        CmpOp::Eq | CmpOp::Equ => ua == ub,
        CmpOp::Ne | CmpOp::Neu => ua != ub,
        CmpOp::Lt | CmpOp::Ltu => {
            if signed {
                sa < sb
            } else {
                ua < ub
            }
        }
        CmpOp::Le | CmpOp::Leu => {
            if signed {
                sa <= sb
            } else {
                ua <= ub
            }
        }
        CmpOp::Gt | CmpOp::Gtu => {
            if signed {
                sa > sb
            } else {
                ua > ub
            }
        }
        CmpOp::Ge | CmpOp::Geu => {
            if signed {
                sa >= sb
            } else {
                ua >= ub
            }
        }
        CmpOp::Lo => ua < ub,
        CmpOp::Ls => ua <= ub,
        CmpOp::Hi => ua > ub,
        CmpOp::Hs => ua >= ub,
        CmpOp::Num => true,
        CmpOp::Nan => false,
    }
}

pub fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a ^ b,
    }
}

pub fn testp(kind: TestKind, ty: Ty, a: u64) -> bool {
    let t = match kind {
        TestKind::Finite => fp::TestP::Finite,
        TestKind::Infinite => fp::TestP::Infinite,
        TestKind::Number => fp::TestP::Number,
        TestKind::NotANumber => fp::TestP::NotANumber,
        TestKind::Normal => fp::TestP::Normal,
        TestKind::Subnormal => fp::TestP::Subnormal,
    };
    match ty {
        Ty::F64 => fp::testp_f64(f64v(a), t),
        _ => fp::testp_f32(f32v(a), t),
    }
}

/// `cvt`: every combination of integer and float types.
pub fn cvt(dst: Ty, src: Ty, v: u64, round: Option<CvtRound>, ftz: bool, sat: bool) -> u64 {
    let dbits = dst.bits();
    if !src.is_float() && !dst.is_float() {
        let x = wide(v, src);
        let y = if sat {
            clamp_to(x, dbits, dst.is_signed())
        } else {
            x
        };
        // Signed results are kept sign-extended, as PTX does for wider registers.
        return if dst.is_signed() {
            sx(y as u64, dbits) as u64
        } else {
            zx(y as u64, dbits)
        };
    }
    if !src.is_float() {
        let x = wide(v, src);
        let r = match round {
            Some(CvtRound::Float(r)) => rnd(r),
            _ => fp::Rounding::Nearest,
        };
        let bits = match dst {
            Ty::F32 => {
                let f = fp::int_to_f32(x, r);
                let f = if sat { fp::sat_f32(f) } else { f };
                u64::from(f.to_bits())
            }
            Ty::F64 => {
                let f = fp::int_to_f64(x, r);
                (if sat { fp::sat_f64(f) } else { f }).to_bits()
            }
            Ty::F16 => {
                let h = fp::int_to_f16(x, r);
                u64::from(if sat { fp::sat_f16(h) } else { h })
            }
            Ty::BF16 => {
                let h = fp::int_to_bf16(x, r);
                u64::from(if sat { fp::sat_bf16(h) } else { h })
            }
            _ => 0,
        };
        return bits;
    }
    if !dst.is_float() {
        // Float to integer: round (default toward zero), saturate, NaN -> 0.
        let r = match round {
            Some(CvtRound::Int(r)) | Some(CvtRound::Float(r)) => rnd(r),
            _ => fp::Rounding::Zero,
        };
        let signed = dst.is_signed();
        let out = match src {
            Ty::F32 => fp::float_to_int(f64::from(f32v(v)), true, r, ftz, signed, dbits),
            Ty::F64 => fp::float_to_int(f64v(v), false, r, false, signed, dbits),
            Ty::F16 => fp::f16_to_int(v as u16, r, signed, dbits),
            Ty::BF16 => fp::bf16_to_int(v as u16, r, signed, dbits),
            _ => 0,
        };
        return if signed {
            sx(out, dbits) as u64
        } else {
            zx(out, dbits)
        };
    }
    // Float to float.
    match round {
        Some(CvtRound::Int(r)) => {
            // Round to an integral value in the same format.
            let r = rnd(r);
            match src {
                Ty::F32 => {
                    let f = fp::round_int_f32(f32v(v), r, ftz);
                    u64::from(if sat { fp::sat_f32(f) } else { f }.to_bits())
                }
                Ty::F64 => {
                    let f = fp::round_int_f64(f64v(v), r);
                    (if sat { fp::sat_f64(f) } else { f }).to_bits()
                }
                _ => {
                    let f = fp::round_int_f32(half_to_f32(src, v), r, ftz);
                    f32_to_half(dst, f, fp::Rounding::Nearest, sat)
                }
            }
        }
        other => {
            let r = match other {
                Some(CvtRound::Float(r)) => rnd(r),
                _ => fp::Rounding::Nearest,
            };
            match (dst, src) {
                (Ty::F32, Ty::F32) => {
                    let mut f = f32v(v);
                    if ftz {
                        f = fp::flush_f32(f);
                    }
                    if sat {
                        f = fp::sat_f32(f);
                    }
                    u64::from(f.to_bits())
                }
                (Ty::F64, Ty::F64) => {
                    let f = f64v(v);
                    (if sat { fp::sat_f64(f) } else { f }).to_bits()
                }
                (Ty::F64, Ty::F32) => {
                    let f = fp::f32_to_f64(f32v(v), ftz);
                    (if sat { fp::sat_f64(f) } else { f }).to_bits()
                }
                (Ty::F32, Ty::F64) => {
                    let f = fp::f64_to_f32(f64v(v), r, ftz);
                    u64::from(if sat { fp::sat_f32(f) } else { f }.to_bits())
                }
                (Ty::F32, _) => {
                    let f = half_to_f32(src, v);
                    let f = if ftz { fp::flush_f32(f) } else { f };
                    u64::from(if sat { fp::sat_f32(f) } else { f }.to_bits())
                }
                (Ty::F64, Ty::F16) => fp::f16_to_f64(v as u16).to_bits(),
                (Ty::F64, _) => fp::bf16_to_f64(v as u16).to_bits(),
                (Ty::F16, Ty::F64) => sat_half(false, fp::f64_to_f16(f64v(v), r), sat),
                (Ty::BF16, Ty::F64) => sat_half(true, fp::f64_to_bf16(f64v(v), r), sat),
                (Ty::F16, Ty::BF16) => sat_half(false, fp::bf16_to_f16(v as u16, r), sat),
                (Ty::BF16, Ty::F16) => sat_half(true, fp::f16_to_bf16(v as u16, r), sat),
                (_, Ty::F32) => {
                    let f = f32v(v);
                    let f = if ftz { fp::flush_f32(f) } else { f };
                    f32_to_half(dst, f, r, sat)
                }
                (_, _) => sat_half(dst == Ty::BF16, v as u16, sat),
            }
        }
    }
}

fn half_to_f32(ty: Ty, v: u64) -> f32 {
    if ty == Ty::BF16 {
        fp::bf16_to_f32(v as u16)
    } else {
        fp::f16_to_f32(v as u16)
    }
}

fn f32_to_half(ty: Ty, f: f32, r: fp::Rounding, sat: bool) -> u64 {
    if ty == Ty::BF16 {
        sat_half(true, fp::f32_to_bf16(f, r), sat)
    } else {
        sat_half(false, fp::f32_to_f16(f, r), sat)
    }
}

fn sat_half(bf: bool, h: u16, sat: bool) -> u64 {
    u64::from(match (sat, bf) {
        (false, _) => h,
        (true, true) => fp::sat_bf16(h),
        (true, false) => fp::sat_f16(h),
    })
}

/// The atomic operation's new value from the old one.
pub fn atom_apply(op: AtomOp, ty: Ty, old: u64, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    match op {
        // As the GPU adds: f32 flushes subnormal inputs and results
        // (`atom.add.f32` is `.ftz`) and gives the canonical NaN; f64 keeps
        // subnormals and propagates a NaN operand.
        AtomOp::Add => match ty {
            Ty::F32 => {
                u64::from(fp::add_f32(f32v(old), f32v(a), fp::Rounding::Nearest, true).to_bits())
            }
            Ty::F64 => fp::add_f64(f64v(old), f64v(a), fp::Rounding::Nearest).to_bits(),
            _ => zx(old.wrapping_add(a), bits),
        },
        AtomOp::Inc => {
            let (o, a) = (zx(old, 32), zx(a, 32));
            if o >= a {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, a) = (zx(old, 32), zx(a, 32));
            if o == 0 || o > a {
                a
            } else {
                o - 1
            }
        }
        AtomOp::Min => {
            if ty.is_signed() {
                zx(sx(old, bits).min(sx(a, bits)) as u64, bits)
            } else {
                zx(old, bits).min(zx(a, bits))
            }
        }
        AtomOp::Max => {
            if ty.is_signed() {
                zx(sx(old, bits).max(sx(a, bits)) as u64, bits)
            } else {
                zx(old, bits).max(zx(a, bits))
            }
        }
        AtomOp::And => old & a,
        AtomOp::Or => old | a,
        AtomOp::Xor => old ^ a,
        AtomOp::Exch => a,
        AtomOp::Cas => {
            if zx(old, bits) == zx(a, bits) {
                b
            } else {
                old
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_truncates_toward_zero() {
        assert_eq!(
            int_op(IntOp::Div, Ty::S32, &[(-7i64) as u64, 2]) as u32 as i32,
            -3
        );
        assert_eq!(
            int_op(IntOp::Rem, Ty::S32, &[(-7i64) as u64, 2]) as u32 as i32,
            -1
        );
        assert_eq!(
            int_op(IntOp::Rem, Ty::S32, &[7, (-2i64) as u64]) as u32 as i32,
            1
        );
        assert_eq!(
            int_op(IntOp::Div, Ty::S32, &[0x8000_0000, (-1i64) as u64]),
            0x8000_0000
        );
        assert_eq!(int_op(IntOp::Div, Ty::U32, &[5, 0]), 0xffff_ffff);
    }

    #[test]
    fn mul_hi_and_wide() {
        assert_eq!(
            int_op(IntOp::MulHi, Ty::U32, &[0xffff_ffff, 0xffff_ffff]),
            0xffff_fffe
        );
        assert_eq!(
            int_op(IntOp::MulHi, Ty::S32, &[(-1i64) as u64, 1]),
            0xffff_ffff
        );
        assert_eq!(
            int_op(IntOp::MulWide, Ty::S32, &[(-2i64) as u64, 3]),
            (-6i64) as u64
        );
        assert_eq!(int_op(IntOp::MulHi, Ty::U64, &[u64::MAX, 2]), 1);
    }

    #[test]
    fn bit_ops() {
        assert_eq!(int_op(IntOp::Bfe, Ty::U32, &[0xabcd_1234, 4, 8]), 0x23);
        assert_eq!(
            int_op(IntOp::Bfe, Ty::S32, &[0x0000_0080, 0, 8]),
            0xffff_ff80
        );
        assert_eq!(int_op(IntOp::Bfi, Ty::B32, &[0xf, 0, 4, 4]), 0xf0);
        assert_eq!(
            int_op(IntOp::Bfind { shiftamt: false }, Ty::U32, &[0x10]),
            4
        );
        assert_eq!(
            int_op(IntOp::Bfind { shiftamt: false }, Ty::U32, &[0]),
            0xffff_ffff
        );
        assert_eq!(
            int_op(IntOp::Bfind { shiftamt: false }, Ty::S32, &[0xffff_ffff]),
            0xffff_ffff
        );
        assert_eq!(int_op(IntOp::Clz, Ty::B32, &[1]), 31);
        assert_eq!(int_op(IntOp::Brev, Ty::B32, &[1]), 0x8000_0000);
        assert_eq!(
            prmt(0x33221100, 0x77665544, 0x3210, PrmtMode::Default),
            0x33221100
        );
        assert_eq!(
            prmt(0x33221100, 0x77665544, 0x7654, PrmtMode::Default),
            0x77665544
        );
        assert_eq!(prmt(0x33221180, 0, 0x8888, PrmtMode::Default), 0xffff_ffff);
        assert_eq!(
            int_op(IntOp::Lop3(0xf0 & 0xcc), Ty::B32, &[0xff00, 0xf0f0, 0]),
            0xf000
        );
        assert_eq!(
            int_op(
                IntOp::Shf {
                    left: true,
                    clamp: false
                },
                Ty::B32,
                &[0x8000_0000, 0x1, 1]
            ),
            0x3
        );
        assert_eq!(int_op(IntOp::Shr, Ty::S32, &[0x8000_0000, 40]), 0xffff_ffff);
        assert_eq!(int_op(IntOp::Shl, Ty::B32, &[1, 32]), 0);
    }

    #[test]
    fn conversions_saturate() {
        let f = |x: f32| u64::from(x.to_bits());
        assert_eq!(
            cvt(
                Ty::S32,
                Ty::F32,
                f(1e20),
                Some(CvtRound::Int(Round::Zero)),
                false,
                false
            ) as u32,
            i32::MAX as u32
        );
        assert_eq!(
            cvt(
                Ty::U32,
                Ty::F32,
                f(-1.0),
                Some(CvtRound::Int(Round::Zero)),
                false,
                false
            ),
            0
        );
        assert_eq!(
            cvt(
                Ty::S32,
                Ty::F32,
                f(f32::NAN),
                Some(CvtRound::Int(Round::Nearest)),
                false,
                false
            ),
            0
        );
        assert_eq!(
            cvt(
                Ty::S32,
                Ty::F32,
                f(2.5),
                Some(CvtRound::Int(Round::Nearest)),
                false,
                false
            ),
            2
        );
        assert_eq!(
            cvt(Ty::S32, Ty::S8, 0x80, None, false, false) as u32,
            0xffff_ff80
        );
        assert_eq!(cvt(Ty::U8, Ty::S32, (-5i64) as u64, None, false, true), 0);
    }
}
