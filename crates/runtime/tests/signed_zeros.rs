//! `min`, `max` and `.sat` on zeros of both signs, as PTX defines them:
//! -0.0 orders below +0.0 (max(+0, -0) = +0, min = -0, in either operand
//! order), a single NaN operand gives the other one, and `.sat` clamps
//! -0.0 to +0.0. LLVM's `minnum`/`maxnum` may return either zero, and the
//! compiled backend's min and max once gave -0.0 for max(+0.0, -0.0)
//! (found by the random kernels). Both backends, f32 and f64, warps of
//! 32, 16 and 8 lanes, against the host's values.

mod common;

use warpfold::Backend;

const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry zeros(.param .u64 po, .param .u64 pa, .param .u64 pd)
{
  .reg .f32 %f<8>;
  .reg .f64 %d<8>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd6, [pd];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  ld.global.f32 %f1, [%rd3+4];
  max.f32 %f2, %f0, %f1;
  min.f32 %f3, %f0, %f1;
  add.sat.f32 %f4, %f0, %f1;
  mul.wide.u32 %rd2, %r0, 16;
  add.s64 %rd3, %rd6, %rd2;
  ld.global.f64 %d0, [%rd3];
  ld.global.f64 %d1, [%rd3+8];
  max.f64 %d2, %d0, %d1;
  min.f64 %d3, %d0, %d1;
  mul.wide.u32 %rd2, %r0, 32;
  add.s64 %rd4, %rd0, %rd2;
  st.global.f32 [%rd4], %f2;
  st.global.f32 [%rd4+4], %f3;
  st.global.f32 [%rd4+8], %f4;
  st.global.f64 [%rd4+16], %d2;
  st.global.f64 [%rd4+24], %d3;
  ret;
}
"#;

/// PTX `max` (`want_max`) or `min` on two values: -0 < +0, one NaN
/// gives the other operand, two give NaN.
fn ptx_minmax(a: f64, b: f64, want_max: bool) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if a == b && a == 0.0 => {
            // both zeros: the sign decides
            let neg = if want_max {
                a.is_sign_negative() && b.is_sign_negative()
            } else {
                a.is_sign_negative() || b.is_sign_negative()
            };
            if neg {
                -0.0
            } else {
                0.0
            }
        }
        _ if (a > b) == want_max => a,
        _ => b,
    }
}

#[test]
fn min_max_and_saturation_order_negative_zero_below_positive_zero() {
    let vals = [0.0f64, -0.0, 1.0, -1.0, f64::NAN, 2.5, -0.0, 0.0];
    let pairs: Vec<(f64, f64)> = (0..32)
        .map(|i| (vals[i % 8], vals[(i / 8 + i) % 8]))
        .collect();
    let a32: Vec<f32> = pairs
        .iter()
        .flat_map(|&(a, b)| [a as f32, b as f32])
        .collect();
    let a64: Vec<f64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    // The bits every backend must give, per lane: max, min, sat(a + b)
    // in f32, max and min in f64.
    let bits = |x: f64| {
        if x.is_nan() {
            None
        } else {
            Some(x.to_bits())
        }
    };
    for backend in [Backend::Interp, Backend::Cpu] {
        for width in [None, Some(16), Some(8)] {
            let (a, d): (&[u8], &[u8]) = (bytemuck::cast_slice(&a32), bytemuck::cast_slice(&a64));
            let o = common::one_cta(PTX, "zeros", backend, width, &[a, d], 32 * 32);
            for (lane, &(a, b)) in pairs.iter().enumerate() {
                let at = |off: usize, n: usize| &o[lane * 32 + off..lane * 32 + off + n];
                let f32_at = |off| f64::from(f32::from_le_bytes(at(off, 4).try_into().unwrap()));
                let f64_at = |off| f64::from_le_bytes(at(off, 8).try_into().unwrap());
                let sat = ((a as f32 + b as f32) as f64).clamp(0.0, 1.0);
                let sat = if sat.is_nan() { 0.0 } else { sat + 0.0 };
                let want = [
                    ptx_minmax(a, b, true),
                    ptx_minmax(a, b, false),
                    sat,
                    ptx_minmax(a, b, true),
                    ptx_minmax(a, b, false),
                ];
                let got = [f32_at(0), f32_at(4), f32_at(8), f64_at(16), f64_at(24)];
                for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                    assert_eq!(
                        bits(*g),
                        bits(*w),
                        "{backend:?}, {width:?} lanes, lane {lane} ({a}, {b}), result {i}: {g} for {w}"
                    );
                }
            }
        }
    }
}
