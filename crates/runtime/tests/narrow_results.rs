//! `cvt` to a signed type narrower than its destination register
//! sign-extends the result into the register, as the interpreter does
//! (PTX's rule for destinations wider than the instruction type). The
//! compiled backend's per-lane conversions once zero-extended them
//! (`cvt.sat.s8.s32` of -200 gave 0x80 for 0xffffff80; found by the
//! random kernels). Both backends, against the host's values.

mod common;

use warpfold::Backend;

const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry narrow(.param .u64 po, .param .u64 pa)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pa];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r1, [%rd3];
  cvt.rn.f32.s32 %f0, %r1;
  cvt.sat.s8.s32 %r2, %r1;
  cvt.sat.s16.s32 %r3, %r1;
  cvt.rzi.s8.f32 %r4, %f0;
  cvt.rni.s16.f32 %r5, %f0;
  cvt.sat.u8.s32 %r6, %r1;
  mul.wide.u32 %rd2, %r0, 20;
  add.s64 %rd4, %rd0, %rd2;
  st.global.u32 [%rd4], %r2;
  st.global.u32 [%rd4+4], %r3;
  st.global.u32 [%rd4+8], %r4;
  st.global.u32 [%rd4+12], %r5;
  st.global.u32 [%rd4+16], %r6;
  ret;
}
"#;

#[test]
fn signed_narrow_conversions_sign_extend_into_the_register() {
    let inputs: Vec<i32> = (0..32).map(|i| (i - 16) * 2503 + (i % 3) * 7).collect();
    // Each input's five results, as 32-bit registers hold them.
    let want: Vec<u32> = inputs
        .iter()
        .flat_map(|&x| {
            let s8 = x.clamp(-128, 127);
            let s16 = x.clamp(-32768, 32767);
            let u8 = x.clamp(0, 255);
            [s8 as u32, s16 as u32, s8 as u32, s16 as u32, u8 as u32]
        })
        .collect();
    for backend in [Backend::Interp, Backend::Cpu] {
        for width in [None, Some(8)] {
            let input: &[u8] = bytemuck::cast_slice(&inputs);
            let got = common::words(&common::one_cta(
                PTX,
                "narrow",
                backend,
                width,
                &[input],
                32 * 20,
            ));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g,
                    w,
                    "{backend:?}, {width:?} lanes: input {}, result {}: {g:#x} for {w:#x}",
                    inputs[i / 5],
                    i % 5
                );
            }
        }
    }
}
