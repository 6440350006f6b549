//! Divergent ifs that the compiled backend runs as guarded instructions
//! (`if_convert`): an if/else inside an if/else's arm, a triangle inside
//! the other arm, each arm a few arithmetic instructions. Lanes take every
//! combination of the conditions; both backends, warps of 32, 16 and 8
//! lanes, against values computed on the host.

mod common;

use warpfold::Backend;

const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry nested(.param .u64 po)
{
  .reg .f32 %f<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  ld.param.u64 %rd0, [po];
  mov.u32 %r0, %tid.x;
  cvt.rn.f32.u32 %f0, %r0;
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0f40000000;
  and.b32 %r1, %r0, 3;
  setp.eq.u32 %p0, %r1, 0;
  @%p0 bra ELSE;
  add.f32 %f1, %f1, %f0;
  and.b32 %r2, %r0, 8;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra IN_ELSE;
  mul.f32 %f2, %f2, %f0;
  bra.uni IN_JOIN;
IN_ELSE:
  sub.f32 %f2, %f2, %f0;
IN_JOIN:
  add.f32 %f1, %f1, %f2;
  bra.uni JOIN;
ELSE:
  and.b32 %r3, %r0, 16;
  setp.eq.u32 %p2, %r3, 0;
  @%p2 bra SKIP;
  div.rn.f32 %f2, %f2, %f0;
SKIP:
  add.f32 %f1, %f1, 0f3F000000;
JOIN:
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd2, %rd0, %rd1;
  st.global.f32 [%rd2], %f1;
  st.global.f32 [%rd2+4], %f2;
  ret;
}
"#;

/// What thread `t` stores.
fn host(t: u32) -> [f32; 2] {
    let x = t as f32;
    let (mut a, mut b) = (1.0f32, 2.0f32);
    if t & 3 != 0 {
        a += x;
        if t & 8 == 0 {
            b *= x;
        } else {
            b -= x;
        }
        a += b;
    } else {
        if t & 16 != 0 {
            b /= x;
        }
        a += 0.5;
    }
    [a, b]
}

#[test]
fn ifs_inside_ifs_agree_with_the_host_on_both_backends() {
    let want: Vec<u32> = (0..32u32).flat_map(host).map(f32::to_bits).collect();
    let before = warpfold_cpu::if_converted_branches();
    for (backend, width) in [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ] {
        let got = common::words(&common::one_cta(PTX, "nested", backend, width, &[], 32 * 8));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "{backend:?} {width:?}: thread {}, value {}: {} instead of {}",
                i / 2,
                i % 2,
                f32::from_bits(*g),
                f32::from_bits(*w)
            );
        }
    }
    // The inner if/else, the triangle, then the outer if/else, at each
    // width (the kernel is prepared twice a compilation).
    if std::env::var("WARPFOLD_IF_CONVERT").map_or(true, |v| v != "off") {
        assert!(warpfold_cpu::if_converted_branches() - before >= 3 * 2 * 3);
    }
}
