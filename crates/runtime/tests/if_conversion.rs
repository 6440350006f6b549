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
    for (backend, width) in common::BACKENDS {
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

/// An if inside a loop whose arm reads a register an inner `@p` may leave
/// unchanged (from the previous trip) and then sets it: that last write
/// must stay guarded, or lanes that skip the arm get it too. Odd lanes
/// skip the arm on the first trip, even lanes on the second; the inner
/// guard is off everywhere, so every lane stores 10 + 1.
const CARRIED: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry carried(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r5, 10;
  mov.u32 %r6, 0;
  mov.u32 %r9, 0;
  setp.gt.u32 %p3, %r1, 1000;
LOOP:
  and.b32 %r2, %r1, 1;
  add.s32 %r3, %r2, %r9;
  setp.eq.s32 %p1, %r3, 1;
  @%p1 bra SKIP;
  @%p3 mov.u32 %r5, 1;
  add.s32 %r6, %r5, 1;
  mov.u32 %r5, 2;
SKIP:
  add.s32 %r9, %r9, 1;
  setp.lt.s32 %p2, %r9, 2;
  @%p2 bra LOOP;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}
"#;

#[test]
fn a_value_an_inner_guard_keeps_stays_for_lanes_that_skip_the_arm() {
    for (backend, width) in common::BACKENDS {
        let got = common::words(&common::one_cta(
            CARRIED,
            "carried",
            backend,
            width,
            &[],
            32 * 4,
        ));
        assert_eq!(got, vec![11u32; 32], "{backend:?} {width:?}");
    }
}

/// `out[t] = t < n ? in[t] * 2 : -1` as a triangle around the load, which
/// the compiled backend runs as a guarded (masked) load: lanes past `n`
/// read nothing, so with `n` = 0 `in` may be a null pointer, and with `n`
/// = 20 an input of 20 floats is all that is read.
const GUARDED_LOAD: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry guarded_load(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  mov.f32 %f1, 0fBF800000;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra SKIP;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f2, [%rd3];
  add.f32 %f1, %f2, %f2;
SKIP:
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.f32 [%rd6], %f1;
  ret;
}
"#;

#[test]
fn a_guarded_load_reads_nothing_for_lanes_past_the_bound() {
    use warpfold::{Arg, Device};
    for backend in [Backend::Interp, Backend::Cpu] {
        for n in [0u32, 20] {
            let dev = Device::new().with_backend(backend).with_disk_cache(None);
            let m = dev
                .load_ptx_named(GUARDED_LOAD, "guarded_load.ptx")
                .unwrap();
            let k = m.kernel("guarded_load").unwrap();
            assert_eq!(k.effective_backend([32, 1, 1]).0, backend);
            let input: Vec<f32> = (0..20).map(|i| i as f32 + 0.5).collect();
            let inp = dev.buffer_from(&input).unwrap();
            let out = dev.buffer_zeroed(32 * 4).unwrap();
            let in_arg = if n == 0 {
                Arg::U64(0)
            } else {
                Arg::Buffer(&inp)
            };
            k.launch(
                [1, 1, 1],
                [32, 1, 1],
                0,
                &[Arg::Buffer(&out), in_arg, Arg::U32(n)],
            )
            .unwrap();
            let got: Vec<f32> = out.to_vec().unwrap();
            let want: Vec<f32> = (0..32u32)
                .map(|t| if t < n { 2.0 * (t as f32 + 0.5) } else { -1.0 })
                .collect();
            assert_eq!(got, want, "{backend:?}, n = {n}");
        }
    }
}
