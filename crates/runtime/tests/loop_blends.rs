//! A loop of one block whose lanes leave it on different trips, as in
//! Mandelbrot's escape loop. The registers it carries round itself and
//! nowhere else (x and y below) are written without a blend with the lanes
//! that have left (`uniform::live_in_one_block`); a register also read
//! after the loop (the trip count, and x in `carried`) keeps the values
//! of the lanes that left. Both backends, warps of 32, 16 and 8 lanes,
//! against values computed on the host. Once some lanes have left, a
//! trip that every remaining lane goes round again goes straight back to
//! the loop's start (`lower::round_again`), not through the dispatcher.

mod common;

use warpfold::{Arg, Backend, Device};

/// Kernel `name`: each thread's trip count stored, and its x too when
/// `with_x` (`carried`; `escape` leaves x dead after the loop).
fn ptx(name: &str, with_x: bool) -> String {
    let store_x = if with_x {
        "  st.global.f32 [%rd2+4], %f0;\n"
    } else {
        ""
    };
    format!(
        r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry {name}(.param .u64 po)
{{
  .reg .f32 %f<3>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<3>;
  .reg .pred %p<3>;
  ld.param.u64 %rd0, [po];
  mov.u32 %r0, %tid.x;
  mul.lo.u32 %r3, %r0, 5;
  rem.u32 %r4, %r3, 11;
  add.u32 %r1, %r4, 1;
  mov.f32 %f0, 0f00000000;
  mov.f32 %f1, 0f3F800000;
  mov.u32 %r2, 0;
LOOP:
  mul.f32 %f2, %f0, %f1;
  add.f32 %f1, %f1, 0f3F000000;
  add.f32 %f0, %f2, 0f3F800000;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p0, %r2, %r1;
  setp.lt.f32 %p1, %f0, 0f42C80000;
  and.pred %p2, %p0, %p1;
  @%p2 bra LOOP;
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r2;
{store_x}  ret;
}}
"#
    )
}

/// Thread `t`'s trip count and x.
fn host(t: u32) -> (u32, f32) {
    let trips = (t * 5) % 11 + 1;
    let (mut x, mut y, mut it) = (0.0f32, 1.0f32, 0u32);
    loop {
        let p = x * y;
        y += 0.5;
        x = p + 1.0;
        it += 1;
        if !(it < trips && x < 100.0) {
            return (it, x);
        }
    }
}

/// `carried` in a CTA of `threads` threads on `backend` at `width` lanes:
/// the words it stores (zeros past the last thread).
fn carried_in(threads: u32, backend: Backend, width: Option<u32>) -> Vec<u32> {
    let dev = Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(&ptx("carried", true), "carried.ptx")
        .unwrap();
    let k = m.kernel("carried").unwrap();
    let (used, why) = k.effective_backend([threads, 1, 1]);
    assert_eq!(used, backend, "{why:?}");
    let out = dev.buffer_zeroed(32 * 8).unwrap();
    k.launch([1, 1, 1], [threads, 1, 1], 0, &[Arg::Buffer(&out)])
        .unwrap();
    common::words(&out.to_bytes())
}

/// A partial warp (20 threads): the lanes past the CTA's end are never
/// live, so the group that leaves the loop last is not all the warp.
#[test]
fn a_partial_warp_leaves_the_loop_as_the_host_says() {
    for (backend, width) in [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ] {
        let got = carried_in(20, backend, width);
        for t in 0..32u32 {
            let want = if t < 20 {
                let (it, x) = host(t);
                [it, x.to_bits()]
            } else {
                [0, 0]
            };
            let at = 2 * t as usize;
            assert_eq!(
                [got[at], got[at + 1]],
                want,
                "{backend:?} {width:?}: thread {t}'s trips and x"
            );
        }
    }
}

#[test]
fn loop_carried_registers_agree_with_the_host_on_both_backends() {
    // The trips differ between lanes, and some lanes leave by x.
    let trips: std::collections::HashSet<u32> = (0..32).map(|t| host(t).0).collect();
    assert!(trips.len() > 5);
    assert!((0..32).any(|t| host(t).0 < (t * 5) % 11 + 1));
    let before = warpfold_cpu::unblended_writes();
    let rounds_before = warpfold_cpu::straight_rounds();
    for (backend, width) in [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ] {
        for (name, with_x) in [("escape", false), ("carried", true)] {
            let got = common::words(&common::one_cta(
                &ptx(name, with_x),
                name,
                backend,
                width,
                &[],
                32 * 8,
            ));
            for t in 0..32u32 {
                let (it, x) = host(t);
                let (g_it, g_x) = (got[2 * t as usize], got[2 * t as usize + 1]);
                assert_eq!(g_it, it, "{name} {backend:?} {width:?}: thread {t}'s trips");
                let want_x = if with_x { x.to_bits() } else { 0 };
                assert_eq!(
                    g_x,
                    want_x,
                    "{name} {backend:?} {width:?}: thread {t}'s x: {} instead of {}",
                    f32::from_bits(g_x),
                    f32::from_bits(want_x)
                );
            }
        }
    }
    // Each compilation writes x (in `escape`) and y without blends, and
    // a group whose lanes all go round again goes straight back.
    assert!(warpfold_cpu::unblended_writes() > before);
    assert!(warpfold_cpu::straight_rounds() > rounds_before);
}
