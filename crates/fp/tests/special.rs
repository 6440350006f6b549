//! Directed unit tests of special cases.
use warpfold_fp::*;
use Rounding::*;

const MODES: [Rounding; 4] = [Nearest, Zero, Down, Up];

fn b32(x: f32) -> u32 {
    x.to_bits()
}
fn b64(x: f64) -> u64 {
    x.to_bits()
}

#[test]
fn signed_zero_sums() {
    for r in MODES {
        let want_neg = r == Down;
        for x in [1.0f32, 3.5, f32::MIN_POSITIVE, 1e-45] {
            let d = add_f32(x, -x, r, false);
            assert_eq!(d.is_sign_negative(), want_neg, "{r:?} {x}");
            assert_eq!(d, 0.0);
            let d = sub_f32(x, x, r, false);
            assert_eq!(d.is_sign_negative(), want_neg);
            let d = add_f64(x as f64, -(x as f64), r);
            assert_eq!(d.is_sign_negative(), want_neg);
            let d = fma_f32(x, 1.0, -x, r, false);
            assert_eq!(d.is_sign_negative(), want_neg);
            let d = fma_f64(x as f64, 1.0, -(x as f64), r);
            assert_eq!(d.is_sign_negative(), want_neg);
        }
        // -0 + -0 = -0 in every mode, +0 + -0 = +0 except rm.
        assert_eq!(b32(add_f32(-0.0, -0.0, r, false)), b32(-0.0));
        assert_eq!(add_f32(0.0, -0.0, r, false).is_sign_negative(), want_neg);
        // fma with zero product and zero c
        assert_eq!(
            fma_f32(-0.0, 1.0, 0.0, r, false).is_sign_negative(),
            want_neg
        );
        assert_eq!(b32(fma_f32(-0.0, 1.0, -0.0, r, false)), b32(-0.0));
        // product zero, c nonzero: c exactly
        assert_eq!(fma_f32(0.0, 5.0, 1.5e-40, r, false), 1.5e-40);
    }
}

#[test]
fn overflow_per_mode() {
    let m = f32::MAX;
    assert_eq!(add_f32(m, m, Nearest, false), f32::INFINITY);
    assert_eq!(add_f32(m, m, Zero, false), m);
    assert_eq!(add_f32(m, m, Down, false), m);
    assert_eq!(add_f32(m, m, Up, false), f32::INFINITY);
    assert_eq!(add_f32(-m, -m, Nearest, false), f32::NEG_INFINITY);
    assert_eq!(add_f32(-m, -m, Zero, false), -m);
    assert_eq!(add_f32(-m, -m, Down, false), f32::NEG_INFINITY);
    assert_eq!(add_f32(-m, -m, Up, false), -m);
    assert_eq!(mul_f64(f64::MAX, 2.0, Zero), f64::MAX);
    assert_eq!(mul_f64(f64::MAX, -2.0, Up), -f64::MAX);
    assert_eq!(mul_f64(f64::MAX, -2.0, Down), f64::NEG_INFINITY);
    // Just above MAX by less than half an ulp: rn keeps MAX, rp goes to inf.
    assert_eq!(add_f32(m, 1.0, Nearest, false), m);
    assert_eq!(add_f32(m, 1.0, Up, false), f32::INFINITY);
    // Infinite operands are exact regardless of mode.
    assert_eq!(add_f32(f32::INFINITY, 1.0, Zero, false), f32::INFINITY);
    assert_eq!(div_f32(1.0, 0.0, Zero, false), f32::INFINITY);
    assert_eq!(div_f32(-1.0, 0.0, Up, false), f32::NEG_INFINITY);
}

#[test]
fn subnormal_results_and_ftz() {
    let tiny = f32::from_bits(1); // 2^-149
    assert_eq!(mul_f32(tiny, 0.5, Nearest, false), 0.0); // tie -> even (0)
    assert_eq!(mul_f32(tiny, 0.5, Up, false), tiny);
    assert_eq!(b32(mul_f32(-tiny, 0.5, Down, false)), 0x8000_0001);
    assert_eq!(b32(mul_f32(-tiny, 0.5, Nearest, false)), 0x8000_0000);
    assert_eq!(
        mul_f32(f32::from_bits(3), 0.5, Nearest, false),
        f32::from_bits(2)
    ); // 1.5 -> 2
    assert_eq!(
        mul_f32(f32::MIN_POSITIVE, 0.5, Nearest, false),
        f32::from_bits(0x0040_0000)
    );
    // ftz flushes input and output.
    assert_eq!(b32(mul_f32(f32::MIN_POSITIVE, 0.5, Nearest, true)), 0);
    assert_eq!(
        b32(mul_f32(-f32::MIN_POSITIVE, 0.5, Nearest, true)),
        0x8000_0000
    );
    assert_eq!(add_f32(tiny, 1.0, Up, true), 1.0); // input flushed: exact
    assert_eq!(add_f32(tiny, 1.0, Up, false), 1.0 + f32::EPSILON);
    assert_eq!(b32(add_f32(-tiny, 0.0, Nearest, true)), 0); // -0 + +0 = +0
    assert_eq!(sqrt_f32(-tiny, Nearest, true).to_bits(), 0x8000_0000);
    assert!(sqrt_f32(-tiny, Nearest, false).is_nan());
    assert_eq!(flush_f32(-tiny).to_bits(), 0x8000_0000);
    assert_eq!(flush_f32(1.0), 1.0);
    // f64 subnormal results
    let t64 = f64::from_bits(1);
    assert_eq!(mul_f64(t64, 0.5, Up), t64);
    assert_eq!(mul_f64(t64, 0.5, Nearest), 0.0);
    assert_eq!(
        div_f64(f64::MIN_POSITIVE, 4.0, Zero),
        f64::from_bits(1 << 50)
    );
}

#[test]
fn nan_canonicalisation() {
    let qnan = f32::from_bits(0x7fc0_1234);
    let neg_nan = f32::from_bits(0xffc0_0000);
    for r in MODES {
        for ftz in [false, true] {
            assert_eq!(b32(add_f32(qnan, 1.0, r, ftz)), 0x7fff_ffff);
            assert_eq!(b32(mul_f32(neg_nan, 1.0, r, ftz)), 0x7fff_ffff);
            assert_eq!(b32(fma_f32(1.0, 2.0, qnan, r, ftz)), 0x7fff_ffff);
            assert_eq!(
                b32(add_f32(f32::INFINITY, f32::NEG_INFINITY, r, ftz)),
                0x7fff_ffff
            );
            assert_eq!(b32(mul_f32(0.0, f32::INFINITY, r, ftz)), 0x7fff_ffff);
            assert_eq!(b32(div_f32(0.0, 0.0, r, ftz)), 0x7fff_ffff);
            assert_eq!(b32(sqrt_f32(-1.0, r, ftz)), 0x7fff_ffff);
            assert_eq!(b32(fma_f32(0.0, f32::INFINITY, 1.0, r, ftz)), 0x7fff_ffff);
            assert_eq!(
                b32(fma_f32(2.0, f32::INFINITY, f32::NEG_INFINITY, r, ftz)),
                0x7fff_ffff
            );
        }
        // f64: invalid -> canonical, NaN input -> propagated (quieted)
        assert_eq!(
            b64(add_f64(f64::INFINITY, f64::NEG_INFINITY, r)),
            0x7fff_ffff_ffff_ffff
        );
        assert_eq!(b64(sqrt_f64(-2.0, r)), 0x7fff_ffff_ffff_ffff);
        let snan = f64::from_bits(0x7ff0_0000_0000_0001);
        assert_eq!(b64(mul_f64(2.0, snan, r)), 0x7ff8_0000_0000_0001);
        let p = f64::from_bits(0xfff8_0000_0000_00aa);
        assert_eq!(b64(fma_f64(p, snan, 1.0, r)), 0xfff8_0000_0000_00aa);
    }
    // f16 / bf16
    assert_eq!(add_f16(0x7c00, 0xfc00, Nearest, false), 0x7fff);
    assert_eq!(add_f16(0x7e01, 0x3c00, Nearest, false), 0x7fff);
    assert_eq!(mul_bf16(0x7fc1, 0x3f80, Nearest, false), 0x7fff);
    assert_eq!(f32_to_f16(f32::NAN, Nearest), 0x7fff);
    assert_eq!(f32_to_bf16(-f32::NAN, Zero), 0x7fff);
    assert_eq!(b32(f16_to_f32(0x7e00)), 0x7fff_ffff);
    assert_eq!(b64(f32_to_f64(f32::NAN, false)), 0x7fff_ffff_ffff_ffff);
    assert_eq!(b32(f64_to_f32(f64::NAN, Up, false)), 0x7fff_ffff);
}

#[test]
fn saturation() {
    assert_eq!(sat_f32(f32::NAN), 0.0);
    assert_eq!(b32(sat_f32(-0.0)), 0);
    assert_eq!(sat_f32(-5.0), 0.0);
    assert_eq!(sat_f32(0.25), 0.25);
    assert_eq!(sat_f32(1.5), 1.0);
    assert_eq!(sat_f32(f32::INFINITY), 1.0);
    assert_eq!(sat_f64(f64::NEG_INFINITY), 0.0);
    assert_eq!(sat_f64(f64::NAN).to_bits(), 0);
    assert_eq!(sat_f16(0x7fff), 0);
    assert_eq!(sat_f16(0x4000), 0x3c00);
    assert_eq!(sat_f16(0xbc00), 0);
    assert_eq!(sat_f16(0x3800), 0x3800);
}

#[test]
fn minmax_rules() {
    let n = f32::NAN;
    assert_eq!(min_f32(n, 2.0, false, false), 2.0);
    assert_eq!(max_f32(3.0, n, false, false), 3.0);
    assert_eq!(b32(min_f32(n, n, false, false)), 0x7fff_ffff);
    assert_eq!(b32(min_f32(n, 2.0, false, true)), 0x7fff_ffff);
    assert_eq!(b32(max_f32(1.0, n, false, true)), 0x7fff_ffff);
    assert_eq!(b32(min_f32(0.0, -0.0, false, false)), 0x8000_0000);
    assert_eq!(b32(min_f32(-0.0, 0.0, false, false)), 0x8000_0000);
    assert_eq!(b32(max_f32(-0.0, 0.0, false, false)), 0);
    assert_eq!(b32(max_f32(0.0, -0.0, false, false)), 0);
    assert_eq!(min_f32(-1.0, 1.0, false, false), -1.0);
    assert_eq!(max_f32(f32::NEG_INFINITY, -1e30, false, false), -1e30);
    let sub = f32::from_bits(5);
    assert_eq!(b32(max_f32(sub, -0.0, true, false)), 0); // flushed to +0 > -0
    assert_eq!(b32(min_f32(-sub, 0.0, true, false)), 0x8000_0000);
    assert_eq!(min_f32(sub, 1.0, false, false), sub);
    assert_eq!(min_f64(f64::NAN, 4.0), 4.0);
    assert_eq!(b64(max_f64(f64::NAN, f64::NAN)), 0x7fff_ffff_ffff_ffff);
    assert_eq!(b64(min_f64(0.0, -0.0)), 0x8000_0000_0000_0000);
    assert_eq!(min_xorsign_abs_f32(-3.0, 2.0, false, false), -2.0);
    assert_eq!(max_xorsign_abs_f32(-3.0, -2.0, false, false), 3.0);
    // f16
    assert_eq!(min_f16(0x7e00, 0x3c00, false, false), 0x3c00);
    assert_eq!(min_f16(0x7e00, 0x3c00, false, true), 0x7fff);
    assert_eq!(min_f16(0x8000, 0x0000, false, false), 0x8000);
    assert_eq!(max_f16(0xc000, 0xbc00, false, false), 0xbc00);
    assert_eq!(max_bf16(0x7fc0, 0x3f80, false), 0x3f80);
}

#[test]
fn cvt_float_to_int_saturation() {
    let cvt = |x: f64, f32src: bool, r, s, n| float_to_int(x, f32src, r, false, s, n);
    assert_eq!(cvt(1e20, true, Zero, true, 32), i32::MAX as u32 as u64);
    assert_eq!(cvt(-1e20, true, Zero, true, 32), i32::MIN as u32 as u64);
    assert_eq!(cvt(-1.0, true, Zero, false, 32), 0);
    assert_eq!(cvt(-0.5, true, Up, false, 32), 0);
    assert_eq!(cvt(f64::NAN, true, Zero, true, 32), 0);
    assert_eq!(cvt(f64::NAN, true, Zero, false, 16), 0);
    // ISA: NaN -> 1 << (bits-1) when the source is f64 or the destination 64-bit.
    assert_eq!(cvt(f64::NAN, false, Zero, true, 32), 0x8000_0000);
    assert_eq!(cvt(f64::NAN, true, Zero, true, 64), 0x8000_0000_0000_0000);
    assert_eq!(cvt(f64::NAN, false, Nearest, false, 8), 0x80);
    assert_eq!(cvt(f64::INFINITY, false, Zero, false, 64), u64::MAX);
    assert_eq!(
        cvt(f64::NEG_INFINITY, false, Zero, true, 64),
        i64::MIN as u64
    );
    assert_eq!(cvt(9.3e18, false, Zero, true, 64), i64::MAX as u64);
    assert_eq!(cvt(-2.5, false, Nearest, true, 32), (-2i32) as u32 as u64);
    assert_eq!(cvt(-2.5, false, Down, true, 32), (-3i32) as u32 as u64);
    assert_eq!(cvt(-2.5, false, Up, true, 32), (-2i32) as u32 as u64);
    assert_eq!(cvt(3.5, false, Nearest, true, 32), 4);
    assert_eq!(cvt(300.0, false, Zero, false, 8), 255);
    assert_eq!(cvt(-300.0, false, Zero, true, 8), 0x80);
    assert_eq!(cvt(-3.0, false, Zero, true, 8), 0xfd);
    assert_eq!(cvt(-3.0, false, Zero, true, 16), 0xfffd);
    assert_eq!(cvt(65535.7, false, Zero, false, 16), 65535);
    assert_eq!(cvt(65535.7, false, Up, false, 16), 65535);
    assert_eq!(cvt(4294967295.5, false, Nearest, false, 32), 0xffff_ffff);
    assert_eq!(cvt(2147483647.5, false, Nearest, true, 32), 0x7fff_ffff);
    assert_eq!(cvt(-2147483648.7, false, Zero, true, 32), 0x8000_0000);
    assert_eq!(
        cvt(18446744073709551615.0, false, Zero, false, 64),
        u64::MAX
    );
    // ftz on an f32 subnormal source: -tiny rounds up to 0 either way, +tiny with .rpi
    let tiny = f32::from_bits(1) as f64;
    assert_eq!(float_to_int(tiny, true, Up, false, true, 32), 1);
    assert_eq!(float_to_int(tiny, true, Up, true, true, 32), 0);
    // f16 sources
    assert_eq!(f16_to_int(0x7c00, Zero, true, 16), 0x7fff); // +inf
    assert_eq!(f16_to_int(0x7e00, Zero, true, 16), 0);
    assert_eq!(f16_to_int(0x7e00, Zero, true, 64), 0x8000_0000_0000_0000);
    assert_eq!(
        f16_to_int(0xc100, Nearest, true, 32),
        (-2.5f32.round_ties_even() as i32) as u32 as u64
    );
}

#[test]
fn cvt_float_float() {
    assert_eq!(
        f64_to_f32(1.0 + 2f64.powi(-30), Up, false),
        1.0 + f32::EPSILON
    );
    assert_eq!(f64_to_f32(1.0 + 2f64.powi(-30), Nearest, false), 1.0);
    assert_eq!(
        f64_to_f32(-(1.0 + 2f64.powi(-30)), Down, false),
        -(1.0 + f32::EPSILON)
    );
    assert_eq!(f64_to_f32(1e300, Zero, false), f32::MAX);
    assert_eq!(f64_to_f32(1e300, Nearest, false), f32::INFINITY);
    assert_eq!(f64_to_f32(-1e300, Up, false), -f32::MAX);
    assert_eq!(f64_to_f32(1e-300, Up, false), f32::from_bits(1));
    assert_eq!(f64_to_f32(1e-300, Up, true), 0.0);
    assert_eq!(b32(f64_to_f32(-1e-40, Nearest, true)), 0x8000_0000);
    assert_eq!(f32_to_f64(f32::from_bits(1), true), 0.0);
    assert_eq!(f32_to_f64(f32::from_bits(1), false), 2f64.powi(-149));
    // integral rounding
    assert_eq!(b32(round_int_f32(-0.3, Nearest, false)), b32(-0.0));
    assert_eq!(round_int_f32(2.5, Nearest, false), 2.0);
    assert_eq!(round_int_f32(3.5, Nearest, false), 4.0);
    assert_eq!(round_int_f32(-2.5, Zero, false), -2.0);
    assert_eq!(round_int_f32(-2.5, Down, false), -3.0);
    assert_eq!(round_int_f32(2.1, Up, false), 3.0);
    assert_eq!(round_int_f32(f32::from_bits(1), Up, false), 1.0);
    assert_eq!(round_int_f32(f32::from_bits(1), Up, true), 0.0);
    assert_eq!(round_int_f64(-0.5, Up), 0.0);
    assert!(round_int_f64(-0.5, Up).is_sign_negative());
    assert_eq!(b32(round_int_f32(f32::NAN, Zero, false)), 0x7fff_ffff);
}

#[test]
fn int_to_float() {
    let big = (1i128 << 24) + 1;
    assert_eq!(int_to_f32(big, Nearest), 16777216.0);
    assert_eq!(int_to_f32(big, Up), 16777218.0);
    assert_eq!(int_to_f32(-big, Down), -16777218.0);
    assert_eq!(int_to_f32(-big, Zero), -16777216.0);
    assert_eq!(int_to_f32((1i128 << 24) + 3, Nearest), 16777220.0); // tie -> even
    assert_eq!(int_to_f32(u64::MAX as i128, Zero), 18446742974197923840.0);
    assert_eq!(
        int_to_f32(u64::MAX as i128, Nearest),
        18446744073709551616.0
    );
    assert_eq!(
        int_to_f64(i64::MIN as i128, Nearest),
        -9223372036854775808.0
    );
    assert_eq!(int_to_f64((1i128 << 53) + 1, Up), 9007199254740994.0);
    assert_eq!(b32(int_to_f32(0, Down)), 0);
    assert_eq!(int_to_f16(65519, Nearest), 0x7bff); // below the tie 65520
    assert_eq!(int_to_f16(65520, Nearest), 0x7c00); // tie rounds to inf
    assert_eq!(int_to_f16(70000, Zero), 0x7bff);
    assert_eq!(int_to_f16(-70000, Down), 0xfc00);
    assert_eq!(int_to_f16(2049, Nearest), 0x6800); // 2048
    assert_eq!(int_to_f16(2051, Nearest), 0x6802); // 2052 (tie to even)
    assert_eq!(int_to_f16(2049, Up), 0x6801);
}

#[test]
fn f16_bf16_rounding() {
    // 1 + 2^-11 is a tie between 1.0 and 1+2^-10: even -> 1.0
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11), Nearest), 0x3c00);
    // 1 + 3*2^-11 is a tie between 1+2^-10 and 1+2^-9: even -> 0x3c02
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11), Nearest), 0x3c02);
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11), Up), 0x3c01);
    assert_eq!(f32_to_f16(-(1.0 + 2f32.powi(-11)), Down), 0xbc01);
    assert_eq!(f32_to_f16(65520.0, Nearest), 0x7c00);
    assert_eq!(f32_to_f16(65519.99, Nearest), 0x7bff);
    assert_eq!(f32_to_f16(1e6, Zero), 0x7bff);
    assert_eq!(f32_to_f16(2f32.powi(-25), Nearest), 0); // tie with 0 -> 0
    assert_eq!(f32_to_f16(2f32.powi(-25) * 1.5, Nearest), 1);
    assert_eq!(f32_to_f16(2f32.powi(-30), Up), 1);
    assert_eq!(f16_to_f32(1), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
    assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
    // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie.
    assert_eq!(
        f64_to_f16(1.0 + 2f64.powi(-11) + 2f64.powi(-40), Nearest),
        0x3c01
    );
    // bf16
    assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000), Nearest), 0x3f80); // tie -> even
    assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000), Nearest), 0x3f82);
    assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_0001), Up), 0x3f81);
    assert_eq!(f32_to_bf16(f32::MAX, Nearest), 0x7f80);
    assert_eq!(f32_to_bf16(f32::MAX, Zero), 0x7f7f);
    assert_eq!(bf16_to_f32(0x3f80), 1.0);
    assert_eq!(bf16_to_f32(0x0001), f32::from_bits(0x0001_0000));
    // f16 arithmetic
    assert_eq!(add_f16(0x3c00, 0x3c00, Nearest, false), 0x4000);
    assert_eq!(add_f16(0x3c00, 0x0001, Nearest, false), 0x3c00);
    assert_eq!(add_f16(0x3c00, 0x0001, Up, false), 0x3c01);
    assert_eq!(add_f16(0x3c00, 0x0001, Up, true), 0x3c00);
    assert_eq!(mul_f16(0x0400, 0x3800, Nearest, false), 0x0200);
    assert_eq!(mul_f16(0x0400, 0x3800, Nearest, true), 0x0000);
    assert_eq!(add_f16(0x3c00, 0xbc00, Down, false), 0x8000);
    assert_eq!(add_f16(0x3c00, 0xbc00, Nearest, false), 0x0000);
    // fma single rounding: (1+2^-10)*(1-2^-10)... = 1 - 2^-20, + (-1) exact
    assert_eq!(
        fma_f16(0x3c01, 0x3bfe, 0xbc00, Nearest, false),
        f32_to_f16(-(2f32.powi(-20)) - 2f32.powi(-21) * 0.0, Nearest)
    );
    assert_eq!(mul_f16(0x7bff, 0x4000, Nearest, false), 0x7c00);
    assert_eq!(mul_f16(0x7bff, 0x4000, Zero, false), 0x7bff);
    assert_eq!(neg_f16(0x3c00), 0xbc00);
    assert_eq!(abs_f16(0xbc00), 0x3c00);
    let x = f16x2_map2(0x4000_3c00, 0x3c00_3c00, |a, b| {
        add_f16(a, b, Nearest, false)
    });
    assert_eq!(x, 0x4200_4000);
    let y = f16x2_map3(0x4000_3c00, 0x4000_4000, 0x3c00_bc00, |a, b, c| {
        fma_f16(a, b, c, Nearest, false)
    });
    assert_eq!(y, 0x4500_3c00);
    assert_eq!(fma_bf16(0x3f80, 0x4000, 0x3f80, Nearest, false), 0x4040);
}

#[test]
fn testp_and_copysign() {
    use TestP::*;
    assert!(testp_f32(0.0, Normal));
    assert!(testp_f32(-0.0, Normal));
    assert!(!testp_f32(0.0, Subnormal));
    assert!(testp_f32(f32::from_bits(1), Subnormal));
    assert!(!testp_f32(f32::from_bits(1), Normal));
    assert!(!testp_f32(f32::INFINITY, Normal));
    assert!(!testp_f32(f32::NAN, Normal));
    assert!(testp_f32(f32::INFINITY, Infinite));
    assert!(!testp_f32(f32::INFINITY, Finite));
    assert!(testp_f32(f32::INFINITY, Number));
    assert!(!testp_f32(f32::NAN, Number));
    assert!(testp_f32(f32::NAN, NotANumber));
    assert!(testp_f64(f64::from_bits(1), Subnormal));
    assert!(testp_f64(1.0, Finite));
    assert_eq!(copysign_f32(-1.0, 2.0), -2.0);
    assert_eq!(copysign_f32(1.0, -2.0), 2.0);
    assert_eq!(copysign_f64(-0.0, 3.0), -3.0);
}

#[test]
fn approx_specials() {
    assert_eq!(ex2_approx_f32(f32::NEG_INFINITY, false).to_bits(), 0);
    assert_eq!(ex2_approx_f32(-0.0, false), 1.0);
    assert_eq!(ex2_approx_f32(f32::INFINITY, false), f32::INFINITY);
    assert_eq!(ex2_approx_f32(-149.0, false), f32::from_bits(1));
    assert_eq!(ex2_approx_f32(-149.0, true), 0.0);
    assert_eq!(b32(ex2_approx_f32(f32::NAN, false)), 0x7fff_ffff);
    assert_eq!(lg2_approx_f32(-0.0, false), f32::NEG_INFINITY);
    assert_eq!(lg2_approx_f32(f32::from_bits(1), true), f32::NEG_INFINITY);
    assert_eq!(lg2_approx_f32(f32::from_bits(1), false), -149.0);
    assert_eq!(b32(lg2_approx_f32(-1.0, false)), 0x7fff_ffff);
    assert_eq!(b32(lg2_approx_f32(f32::NEG_INFINITY, false)), 0x7fff_ffff);
    assert_eq!(lg2_approx_f32(f32::INFINITY, false), f32::INFINITY);
    assert_eq!(b32(sin_approx_f32(f32::INFINITY, false)), 0x7fff_ffff);
    assert_eq!(b32(cos_approx_f32(f32::NEG_INFINITY, false)), 0x7fff_ffff);
    assert_eq!(b32(sin_approx_f32(-0.0, false)), 0x8000_0000);
    assert_eq!(cos_approx_f32(-0.0, false), 1.0);
    assert_eq!(b32(sin_approx_f32(-f32::from_bits(7), true)), 0x8000_0000);
    assert_eq!(rcp_approx_f32(-0.0, false), f32::NEG_INFINITY);
    assert_eq!(b32(rcp_approx_f32(f32::NEG_INFINITY, false)), 0x8000_0000);
    assert_eq!(rcp_approx_f32(f32::from_bits(1), true), f32::INFINITY);
    assert_eq!(b32(sqrt_approx_f32(-0.0, false)), 0x8000_0000);
    assert_eq!(b32(sqrt_approx_f32(-1.0, false)), 0x7fff_ffff);
    assert_eq!(rsqrt_approx_f32(-0.0, false), f32::NEG_INFINITY);
    assert_eq!(rsqrt_approx_f32(0.0, false), f32::INFINITY);
    assert_eq!(b32(rsqrt_approx_f32(f32::INFINITY, false)), 0);
    assert_eq!(b32(rsqrt_approx_f32(-4.0, false)), 0x7fff_ffff);
    assert_eq!(rsqrt_approx_f32(4.0, false), 0.5);
    assert_eq!(tanh_approx_f32(f32::NEG_INFINITY), -1.0);
    assert_eq!(b32(tanh_approx_f32(-0.0)), 0x8000_0000);
    assert_eq!(tanh_approx_f32(f32::from_bits(9)), f32::from_bits(9));
    // div.approx with huge divisor
    assert_eq!(b32(div_approx_f32(1.0, 2f32.powi(127), false)), 0);
    assert_eq!(
        b32(div_approx_f32(-1.0, 2f32.powi(127), false)),
        0x8000_0000
    );
    assert_eq!(
        b32(div_approx_f32(f32::INFINITY, 2f32.powi(127), false)),
        0x7fff_ffff
    );
    assert_eq!(div_approx_f32(6.0, 3.0, false), 2.0);
    assert_eq!(div_full_f32(1.0, 2f32.powi(127), false), 2f32.powi(-127));
    assert_eq!(div_full_f32(1.0, 2f32.powi(127), true), 0.0);
    assert_eq!(b32(div_full_f32(0.0, 0.0, false)), 0x7fff_ffff);
    // rcp.approx.ftz.f64
    assert_eq!(rcp_approx_ftz_f64(2.0), 0.5);
    assert_eq!(rcp_approx_ftz_f64(-0.0), f64::NEG_INFINITY);
    assert_eq!(rcp_approx_ftz_f64(f64::from_bits(1 << 40)), f64::INFINITY); // subnormal
    assert_eq!(
        b64(rcp_approx_ftz_f64(f64::NEG_INFINITY)),
        0x8000_0000_0000_0000
    );
    assert_eq!(b64(rcp_approx_ftz_f64(f64::NAN)), 0x7fff_ffff_0000_0000);
    assert_eq!(b64(rcp_approx_ftz_f64(3.0)) & 0xffff_ffff, 0);
    assert_eq!(b64(rcp_approx_ftz_f64(1e308)), 0); // result subnormal -> 0
    assert_eq!(rsqrt_approx_ftz_f64(4.0), 0.5);
    assert_eq!(rsqrt_approx_ftz_f64(-f64::from_bits(1)), f64::NEG_INFINITY);
    assert_eq!(b64(rsqrt_approx_ftz_f64(-4.0)), 0x7fff_ffff_0000_0000);
    assert_eq!(rsqrt_approx_f64(0.25), 2.0);
    assert_eq!(rsqrt_approx_f64(-0.0), f64::NEG_INFINITY);
    assert_eq!(b64(rsqrt_approx_f64(f64::INFINITY)), 0);
}
