//! `.approx` results stay within the error bounds the PTX ISA states,
//! checked against f64 references.
use proptest::prelude::*;
use warpfold_fp::*;

fn cfg(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Distance in ulps between f32 `got` and the real `want` (f64), measured in
/// units of the f32 spacing at `want`.
fn ulps(got: f32, want: f64) -> f64 {
    let w = want as f32; // neighbour of want
    let ulp = if w.abs() == 0.0 {
        f32::from_bits(1) as f64
    } else {
        let b = w.abs().to_bits();
        (f32::from_bits(b + 1) as f64 - f32::from_bits(b) as f64).min(f32::MAX as f64)
    };
    ((got as f64) - want).abs() / ulp
}

fn pos_f32() -> impl Strategy<Value = f32> {
    (1u32..0x7f80_0000).prop_map(f32::from_bits)
}

proptest! {
    #![proptest_config(cfg(5000))]

    // ex2: <= 2 ulp from the correctly rounded result (so <= 2.5 ulp from exact).
    #[test]
    fn ex2_bound(x in -160.0f32..128.0) {
        let want = (x as f64).exp2();
        let got = ex2_approx_f32(x, false);
        prop_assert!(ulps(got, want) <= 2.5, "x={} got={:e} want={:e}", x, got, want);
    }

    // lg2: abs error 2^-22 on (0.5, 2), else rel error 2^-22.
    #[test]
    fn lg2_bound(x in pos_f32()) {
        let want = (x as f64).log2();
        let got = lg2_approx_f32(x, false) as f64;
        if x > 0.5 && x < 2.0 {
            prop_assert!((got - want).abs() <= 2f64.powf(-22.0));
        } else {
            prop_assert!((got - want).abs() <= 2f64.powf(-22.0) * want.abs());
        }
    }

    // sin/cos: abs error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi].
    #[test]
    fn sincos_bound(x in -100.0f32 * std::f32::consts::PI..100.0 * std::f32::consts::PI) {
        let tol = if (x as f64).abs() <= 2.0 * std::f64::consts::PI { 2f64.powf(-20.5) } else { 2f64.powf(-14.7) };
        prop_assert!((sin_approx_f32(x, false) as f64 - (x as f64).sin()).abs() <= tol);
        prop_assert!((cos_approx_f32(x, false) as f64 - (x as f64).cos()).abs() <= tol);
    }

    // rcp: 1 ulp; sqrt: rel 2^-23; rsqrt: rel 2^-22.9; tanh: rel 2^-11.
    #[test]
    fn rcp_sqrt_rsqrt_tanh_bounds(x in pos_f32(), neg in any::<bool>()) {
        let xs = if neg { -x } else { x };
        let want = 1.0 / xs as f64;
        let got = rcp_approx_f32(xs, false);
        if want.abs() < f32::MAX as f64 { prop_assert!(ulps(got, want) <= 1.0, "rcp {:e}", xs); }
        let want = (x as f64).sqrt();
        prop_assert!(((sqrt_approx_f32(x, false) as f64) - want).abs() <= 2f64.powi(-23) * want);
        let want = 1.0 / (x as f64).sqrt();
        if want < f32::MAX as f64 {
            prop_assert!(((rsqrt_approx_f32(x, false) as f64) - want).abs() <= 2f64.powf(-22.9) * want);
        }
        let want = (xs as f64).tanh();
        prop_assert!(((tanh_approx_f32(xs) as f64) - want).abs() <= 2f64.powi(-11) * want.abs());
    }

    // div.approx: 2 ulp for |b| in [2^-126, 2^126]; div.full: 2 ulp everywhere.
    #[test]
    fn div_bounds(a in pos_f32(), b in pos_f32(), sa in any::<bool>(), sb in any::<bool>()) {
        let a = if sa { -a } else { a };
        let b = if sb { -b } else { b };
        let want = a as f64 / b as f64;
        if want.abs() < f32::MAX as f64 && want.abs() >= f32::MIN_POSITIVE as f64 {
            prop_assert!(ulps(div_full_f32(a, b, false), want) <= 2.0);
            if b.abs() >= 2f32.powi(-126) && b.abs() <= 2f32.powi(126) {
                prop_assert!(ulps(div_approx_f32(a, b, false), want) <= 2.0);
            }
        }
    }

    // rcp.approx.ftz.f64: relative error vs 1/x within 2^-19 (input truncated
    // to 20 fraction bits, result rounded to 20 bits); low word zero.
    #[test]
    fn rcp_rsqrt_f64_hi_bounds(x in (0x0020_0000_0000_0000u64..0x7fd0_0000_0000_0000).prop_map(f64::from_bits)) {
        let got = rcp_approx_ftz_f64(x);
        prop_assert_eq!(got.to_bits() & 0xffff_ffff, 0);
        prop_assert!((got * x - 1.0).abs() <= 2f64.powi(-19));
        let got = rsqrt_approx_ftz_f64(x);
        prop_assert_eq!(got.to_bits() & 0xffff_ffff, 0);
        prop_assert!((got * x.sqrt() - 1.0).abs() <= 2f64.powi(-19));
        let got = rsqrt_approx_f64(x);
        prop_assert!((got - 1.0 / x.sqrt()).abs() <= 2f64.powi(-51) / x.sqrt());
    }
}
