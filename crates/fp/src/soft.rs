//! Format-generic, correctly rounded arithmetic in integer arithmetic
//! ("soft float"): add, sub, mul, fma (single rounding), div, sqrt, on raw bit
//! patterns of any [`Format`] up to binary64.
//!
//! The exact result is formed in `u128` (products up to 106 bits, quotients
//! and square roots with 60+ bits plus an exact remainder/sticky bit) and then
//! rounded once by [`round_pack`]. NaN results are the format's canonical NaN;
//! callers that want other NaN rules (f64 payload propagation) check inputs
//! first. No `.ftz` here: the typed wrappers flush inputs and outputs.

use crate::round::{round_pack, unpack, Class, Format, Rounding};

/// Exact sum of two nonzero finite values given as (sign, mant <= 106 bits,
/// exp). Returns `None` for an exact zero, else (sign, mant, exp, sticky) with
/// a mantissa of at least ~100 significant bits whenever sticky is set.
fn add_exact(
    s1: bool,
    m1: u128,
    e1: i32,
    s2: bool,
    m2: u128,
    e2: i32,
) -> Option<(bool, u128, i32, bool)> {
    debug_assert!(m1 != 0 && m2 != 0);
    // Normalise both so the leading bit is bit 125 (room for a carry).
    let sh1 = m1.leading_zeros() as i32 - 2;
    let sh2 = m2.leading_zeros() as i32 - 2;
    let (n1, x1) = (m1 << sh1 as u32, e1 - sh1);
    let (n2, x2) = (m2 << sh2 as u32, e2 - sh2);
    let ((sb, nb, xb), (ss, ns, xs)) = if (x1, n1) >= (x2, n2) {
        ((s1, n1, x1), (s2, n2, x2))
    } else {
        ((s2, n2, x2), (s1, n1, x1))
    };
    let d = (xb - xs) as u32;
    let (small, sticky) = if d >= 127 {
        (0, true)
    } else {
        (ns >> d, ns & ((1u128 << d) - 1) != 0)
    };
    if sb == ss {
        Some((sb, nb + small, xb, sticky))
    } else {
        let mut diff = nb - small;
        if sticky {
            // big - (small + δ) = (big - small - 1) + (1 - δ)
            diff -= 1;
        }
        if diff == 0 && !sticky {
            None
        } else {
            Some((sb, diff, xb, sticky))
        }
    }
}

/// Sign of an exact zero sum of operands with signs `sa`, `sb`: IEEE says
/// -0 only when both are negative, or under round-toward-negative.
fn zero_sum_sign(sa: bool, sb: bool, r: Rounding) -> bool {
    if sa == sb {
        sa
    } else {
        r == Rounding::Down
    }
}

/// `a + b` correctly rounded.
pub fn add(fmt: Format, a: u64, b: u64, r: Rounding) -> u64 {
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(sa), Class::Inf(sb)) => {
            if sa == sb {
                fmt.inf(sa)
            } else {
                fmt.canonical_nan()
            }
        }
        (Class::Inf(s), _) | (_, Class::Inf(s)) => fmt.inf(s),
        (Class::Zero(sa), Class::Zero(sb)) => fmt.zero(zero_sum_sign(sa, sb, r)),
        (Class::Zero(_), _) => b,
        (_, Class::Zero(_)) => a,
        (
            Class::Finite {
                sign: sa,
                mant: ma,
                exp: ea,
            },
            Class::Finite {
                sign: sb,
                mant: mb,
                exp: eb,
            },
        ) => match add_exact(sa, ma as u128, ea, sb, mb as u128, eb) {
            None => fmt.zero(r == Rounding::Down),
            Some((s, m, e, st)) => round_pack(fmt, s, m, e, st, r),
        },
    }
}

/// `a - b` correctly rounded.
pub fn sub(fmt: Format, a: u64, b: u64, r: Rounding) -> u64 {
    add(fmt, a, b ^ fmt.sign_mask(), r)
}

/// `a * b` correctly rounded.
pub fn mul(fmt: Format, a: u64, b: u64, r: Rounding) -> u64 {
    let ua = unpack(fmt, a);
    let ub = unpack(fmt, b);
    let s = fmt.sign(a) != fmt.sign(b);
    match (ua, ub) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => fmt.canonical_nan(),
        (Class::Inf(_), _) | (_, Class::Inf(_)) => fmt.inf(s),
        (Class::Zero(_), _) | (_, Class::Zero(_)) => fmt.zero(s),
        (
            Class::Finite {
                mant: ma, exp: ea, ..
            },
            Class::Finite {
                mant: mb, exp: eb, ..
            },
        ) => round_pack(fmt, s, ma as u128 * mb as u128, ea + eb, false, r),
    }
}

/// `a * b + c` with a single rounding.
pub fn fma(fmt: Format, a: u64, b: u64, c: u64, r: Rounding) -> u64 {
    let (ua, ub, uc) = (unpack(fmt, a), unpack(fmt, b), unpack(fmt, c));
    if matches!(ua, Class::Nan) || matches!(ub, Class::Nan) || matches!(uc, Class::Nan) {
        return fmt.canonical_nan();
    }
    let sp = fmt.sign(a) != fmt.sign(b);
    let a_inf = matches!(ua, Class::Inf(_));
    let b_inf = matches!(ub, Class::Inf(_));
    let a_zero = matches!(ua, Class::Zero(_));
    let b_zero = matches!(ub, Class::Zero(_));
    if (a_inf && b_zero) || (b_inf && a_zero) {
        return fmt.canonical_nan();
    }
    if a_inf || b_inf {
        if let Class::Inf(sc) = uc {
            if sc != sp {
                return fmt.canonical_nan();
            }
        }
        return fmt.inf(sp);
    }
    if let Class::Inf(sc) = uc {
        return fmt.inf(sc);
    }
    if a_zero || b_zero {
        return match uc {
            Class::Zero(sc) => fmt.zero(zero_sum_sign(sp, sc, r)),
            _ => c,
        };
    }
    let (ma, ea, mb, eb) = match (ua, ub) {
        (
            Class::Finite {
                mant: ma, exp: ea, ..
            },
            Class::Finite {
                mant: mb, exp: eb, ..
            },
        ) => (ma, ea, mb, eb),
        _ => unreachable!(),
    };
    let mp = ma as u128 * mb as u128;
    let ep = ea + eb;
    match uc {
        Class::Zero(_) => round_pack(fmt, sp, mp, ep, false, r),
        Class::Finite {
            sign: sc,
            mant: mc,
            exp: ec,
        } => match add_exact(sp, mp, ep, sc, mc as u128, ec) {
            None => fmt.zero(r == Rounding::Down),
            Some((s, m, e, st)) => round_pack(fmt, s, m, e, st, r),
        },
        _ => unreachable!(),
    }
}

/// `a / b` correctly rounded.
pub fn div(fmt: Format, a: u64, b: u64, r: Rounding) -> u64 {
    let s = fmt.sign(a) != fmt.sign(b);
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(_), Class::Inf(_)) | (Class::Zero(_), Class::Zero(_)) => fmt.canonical_nan(),
        (Class::Inf(_), _) => fmt.inf(s),
        (_, Class::Inf(_)) => fmt.zero(s),
        (_, Class::Zero(_)) => fmt.inf(s),
        (Class::Zero(_), _) => fmt.zero(s),
        (
            Class::Finite {
                mant: ma, exp: ea, ..
            },
            Class::Finite {
                mant: mb, exp: eb, ..
            },
        ) => {
            // Normalise both mantissas to 64 bits (leading bit 63).
            let sa = ma.leading_zeros();
            let sb = mb.leading_zeros();
            let na = (ma << sa) as u128;
            let nb = (mb << sb) as u128;
            let num = na << 63; // leading bit 126
            let q = num / nb; // 63 or 64 significant bits
            let rem = num % nb;
            let e = (ea - sa as i32) - 63 - (eb - sb as i32);
            round_pack(fmt, s, q, e, rem != 0, r)
        }
    }
}

/// `1 / a` correctly rounded.
pub fn rcp(fmt: Format, a: u64, r: Rounding) -> u64 {
    let one = (fmt.bias() as u64) << fmt.frac_bits;
    div(fmt, one, a, r)
}

/// Integer square root: floor(sqrt(m)) for m < 2^126.
fn isqrt(m: u128) -> u128 {
    if m == 0 {
        return 0;
    }
    let mut s = (m as f64).sqrt() as u128;
    if s == 0 {
        s = 1;
    }
    // One Newton step makes the f64 estimate accurate to about one unit.
    s = (s + m / s) >> 1;
    while s * s > m {
        s -= 1;
    }
    while (s + 1) * (s + 1) <= m {
        s += 1;
    }
    s
}

/// `sqrt(a)` correctly rounded. sqrt(-0) = -0; negative nonzero gives NaN.
pub fn sqrt(fmt: Format, a: u64, r: Rounding) -> u64 {
    match unpack(fmt, a) {
        Class::Nan => fmt.canonical_nan(),
        Class::Zero(_) => a,
        Class::Inf(false) => a,
        Class::Inf(true) => fmt.canonical_nan(),
        Class::Finite { sign: true, .. } => fmt.canonical_nan(),
        Class::Finite {
            sign: false,
            mant,
            exp,
        } => {
            let bl = 128 - (mant as u128).leading_zeros() as i32;
            let mut sh = 125 - bl;
            if (exp - sh).rem_euclid(2) != 0 {
                sh += 1;
            }
            let m = (mant as u128) << sh as u32;
            let e = exp - sh;
            let s = isqrt(m); // ~63 significant bits
            round_pack(fmt, false, s, e.div_euclid(2), s * s != m, r)
        }
    }
}
