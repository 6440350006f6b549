//! Warp shuffles whose results only some lanes store (a reduction tree
//! whose sum lane 0 writes, a scan whose total lane 31 writes), which
//! compiled code leaves undefined in the lanes nothing reads (see the
//! backend's `demanded`): shuffle-down, butterfly and shuffle-up trees,
//! stores by lane 0, 3, 5 and 31 and by thread 0 of the block, branches on
//! `tid.x & 31`, `%laneid` and `tid.x`, one tree value also stored by every
//! lane, on compiled code against the interpreter, bit for bit.

mod common;

use warpfold::{Arg, Backend};

/// Over `W` warps of 32 threads (global warp `g`, lane `l`, thread `t`
/// of the block), with `v = in[gid]`, writing words of `out`:
/// - `[g]`: the shuffle-down sum tree of `v` (16, 8, 4, 2, 1), by lane 0
///   (`(tid.x & 31) == 0`, a branch around the store);
/// - `[W + g]`: a butterfly tree `b = b - xor(b, d)` (1, 2, ... 16) by
///   lane 5 (`%laneid == 5`);
/// - `[2W + g]`: an inclusive shuffle-up scan's total, by lane 31;
/// - `[3W + g]`: the shuffle-down tree with a product (`a = a * 0.5 +
///   down(a, d)`) by lane 3, a guarded store;
/// - `[4W + g]`: the sum tree again by thread 0 of each block only
///   (`tid.x == 0`), its other slots untouched;
/// - `[5W + gid]`: the first step of the sum tree, by every lane.
const TAILS: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry tails(.param .u64 out, .param .u64 in)
{
  .reg .pred %p<12>;
  .reg .b32 %r<40>;
  .reg .f32 %f<80>;
  .reg .b64 %rd<30>;
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mov.u32 %r5, %nctaid.x;
  mul.lo.s32 %r6, %r5, %r2;
  shr.u32 %r7, %r6, 5;
  shr.u32 %r8, %r4, 5;
  and.b32 %r9, %r3, 31;
  mov.u32 %r10, %laneid;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  mul.wide.u32 %rd4, %r7, 4;
  mul.wide.u32 %rd5, %r8, 4;
  add.s64 %rd6, %rd0, %rd5;
  // the sum tree
  shfl.sync.down.b32 %f2, %f1, 16, 31, -1;
  add.f32 %f3, %f1, %f2;
  shfl.sync.down.b32 %f4, %f3, 8, 31, -1;
  add.f32 %f5, %f3, %f4;
  shfl.sync.down.b32 %f6, %f5, 4, 31, -1;
  add.f32 %f7, %f5, %f6;
  shfl.sync.down.b32 %f8, %f7, 2, 31, -1;
  add.f32 %f9, %f7, %f8;
  shfl.sync.down.b32 %f10, %f9, 1, 31, -1;
  add.f32 %f11, %f9, %f10;
  // every lane's first step, at [5W + gid]
  mul.lo.s32 %r11, %r7, 5;
  mul.wide.u32 %rd7, %r11, 4;
  add.s64 %rd8, %rd0, %rd7;
  add.s64 %rd9, %rd8, %rd2;
  st.global.f32 [%rd9], %f3;
  // the butterfly tree
  shfl.sync.bfly.b32 %f20, %f1, 1, 31, -1;
  sub.f32 %f21, %f1, %f20;
  shfl.sync.bfly.b32 %f22, %f21, 2, 31, -1;
  sub.f32 %f23, %f21, %f22;
  shfl.sync.bfly.b32 %f24, %f23, 4, 31, -1;
  sub.f32 %f25, %f23, %f24;
  shfl.sync.bfly.b32 %f26, %f25, 8, 31, -1;
  sub.f32 %f27, %f25, %f26;
  shfl.sync.bfly.b32 %f28, %f27, 16, 31, -1;
  sub.f32 %f29, %f27, %f28;
  // the scan
  shfl.sync.up.b32 %f30|%p1, %f1, 1, 0, -1;
  mov.f32 %f31, %f1;
  @%p1 add.f32 %f31, %f1, %f30;
  shfl.sync.up.b32 %f32|%p2, %f31, 2, 0, -1;
  @%p2 add.f32 %f31, %f31, %f32;
  shfl.sync.up.b32 %f33|%p3, %f31, 4, 0, -1;
  @%p3 add.f32 %f31, %f31, %f33;
  shfl.sync.up.b32 %f34|%p4, %f31, 8, 0, -1;
  @%p4 add.f32 %f31, %f31, %f34;
  shfl.sync.up.b32 %f35|%p5, %f31, 16, 0, -1;
  @%p5 add.f32 %f31, %f31, %f35;
  // the product tree
  shfl.sync.down.b32 %f40, %f1, 16, 31, -1;
  fma.rn.f32 %f41, %f1, 0f3F000000, %f40;
  shfl.sync.down.b32 %f42, %f41, 8, 31, -1;
  fma.rn.f32 %f43, %f41, 0f3F000000, %f42;
  shfl.sync.down.b32 %f44, %f43, 4, 31, -1;
  fma.rn.f32 %f45, %f43, 0f3F000000, %f44;
  shfl.sync.down.b32 %f46, %f45, 2, 31, -1;
  fma.rn.f32 %f47, %f45, 0f3F000000, %f46;
  shfl.sync.down.b32 %f48, %f47, 1, 31, -1;
  fma.rn.f32 %f49, %f47, 0f3F000000, %f48;
  // lane 3's guarded store of the product tree, at [3W + g]
  setp.eq.s32 %p6, %r9, 3;
  add.s64 %rd10, %rd6, %rd4;
  add.s64 %rd11, %rd10, %rd4;
  add.s64 %rd12, %rd11, %rd4;
  @%p6 st.global.f32 [%rd12], %f49;
  // lane 0's store of the sum, at [g]
  setp.ne.s32 %p7, %r9, 0;
  @%p7 bra $L_lane5;
  st.global.f32 [%rd6], %f11;
$L_lane5:
  // lane 5's store of the butterfly, at [W + g]
  setp.eq.u32 %p8, %r10, 5;
  @!%p8 bra $L_lane31;
  st.global.f32 [%rd10], %f29;
$L_lane31:
  // lane 31's store of the scan total, at [2W + g]
  setp.ne.s32 %p9, %r9, 31;
  @%p9 bra $L_thread0;
  st.global.f32 [%rd11], %f31;
$L_thread0:
  // thread 0's store of the sum, at [4W + g]
  setp.ne.s32 %p10, %r3, 0;
  @%p10 bra $L_end;
  add.s64 %rd13, %rd12, %rd4;
  st.global.f32 [%rd13], %f11;
$L_end:
  ret;
}
"#;

/// Words of output per global warp (`[5W + gid]` takes 32 a warp).
const WORDS_PER_WARP: usize = 5 + 32;

fn run(backend: Backend, width: Option<u32>, grid: u32, block: u32, input: &[f32]) -> Vec<u32> {
    let dev = common::device(backend, width);
    let k = common::checked_kernel(&dev, TAILS, "tails", [block, 1, 1]);
    let warps = (grid * block / 32) as usize;
    let out = dev.buffer_zeroed(4 * WORDS_PER_WARP * warps).unwrap();
    let inp = dev.buffer_from(input).unwrap();
    k.launch(
        [grid, 1, 1],
        [block, 1, 1],
        0,
        &[Arg::Buffer(&out), Arg::Buffer(&inp)],
    )
    .unwrap();
    common::words(&out.to_bytes())
}

#[test]
fn lanes_that_store_a_shuffle_trees_result_get_the_interpreters_bits() {
    let input: Vec<f32> = (0..64).map(|i| i as f32 * 0.3 - 5.0).collect();
    let before = warpfold_cpu::narrowed_shuffles();
    run(Backend::Cpu, Some(32), 1, 64, &input);
    // The sum tree's first step is stored by every lane: 4 + 5 + 5 + 5.
    assert!(
        warpfold_cpu::narrowed_shuffles() - before >= 19,
        "some tree's shuffles kept every lane"
    );
    for (grid, block) in [(3u32, 64u32), (2, 32), (1, 256)] {
        let n = (grid * block) as usize;
        // Values whose sums round differently in every order, a NaN
        // (whose canonical form lane 0 stores) and infinities.
        let input: Vec<f32> = (0..n)
            .map(|i| match i % 97 {
                13 => f32::NAN,
                41 => f32::INFINITY,
                42 => f32::NEG_INFINITY,
                _ => ((i * 7919) % 1000) as f32 * 0.37 - 150.0 + 1e-3 * i as f32,
            })
            .collect();
        let want = run(Backend::Interp, None, grid, block, &input);
        // (Warp shuffles keep 32 lanes whatever the width asked.)
        for (backend, width) in &common::BACKENDS[1..] {
            assert_eq!(
                run(*backend, *width, grid, block, &input),
                want,
                "{backend:?} at {width:?} lanes, grid {grid} x {block}"
            );
        }
    }
}

/// Without shuffles (so at 8, 16 and 32 lanes) and in blocks shorter than
/// a warp (not packed: the kernel takes the address of dynamic shared
/// memory): thread `t` of the block, `g` its global index, with `v =
/// in[t]` (a vector, not a lane-index form), writes to `out`
/// - `[g]`: 100 + v where `t + 24 == 24` (in a block of 8 the largest
///   lane's value is 31, yet lane 0 is the lane);
/// - `[n + g]`: 200 + v where `t == 13`;
/// - `[2n + g + w]`: 300 + v where `%laneid == 2`, `w` the warp of the
///   block (a guarded store).
///
/// Each is a store to a uniform address by the one lane that may run it:
/// the slot of the CTA's first thread (plus its warp's), in its part.
const SHORT: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.extern .shared .align 4 .b8 dyn[];
.visible .entry short(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  ld.param.u64 %rd8, [in];
  cvta.to.global.u64 %rd8, %rd8;
  ld.param.u32 %r0, [n];
  mov.u64 %rd10, dyn;
  st.shared.u32 [%rd10], %r0;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mul.lo.s32 %r4, %r2, %r3;
  mul.wide.u32 %rd1, %r4, 4;
  add.s64 %rd2, %rd0, %rd1;
  mul.wide.u32 %rd3, %r0, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.s64 %rd5, %rd4, %rd3;
  mul.wide.u32 %rd9, %r1, 4;
  add.s64 %rd11, %rd8, %rd9;
  ld.global.u32 %r10, [%rd11];
  mov.u32 %r5, %laneid;
  setp.eq.u32 %p3, %r5, 2;
  add.u32 %r13, %r10, 300;
  shr.u32 %r9, %r1, 5;
  mul.wide.u32 %rd6, %r9, 4;
  add.s64 %rd7, %rd5, %rd6;
  @%p3 st.global.u32 [%rd7], %r13;
  add.u32 %r6, %r1, 24;
  setp.ne.u32 %p1, %r6, 24;
  @%p1 bra $L_13;
  add.u32 %r7, %r10, 100;
  st.global.u32 [%rd2], %r7;
$L_13:
  setp.ne.u32 %p2, %r1, 13;
  @%p2 bra $L_end;
  add.u32 %r8, %r10, 200;
  st.global.u32 [%rd4], %r8;
$L_end:
  ret;
}
"#;

#[test]
fn a_store_only_one_lane_may_run_takes_that_lanes_value() {
    for (grid, block) in [(4u32, 8u32), (3, 24), (2, 40), (2, 64)] {
        let n = (grid * block) as usize;
        let mut want = None;
        for (backend, width) in common::BACKENDS {
            let dev = common::device(backend, width);
            let k = common::checked_kernel(&dev, SHORT, "short", [block, 1, 1]);
            let out = dev.buffer_zeroed(4 * 3 * n).unwrap();
            let input: Vec<u32> = (0..block).map(|t| t * 1000 + 7).collect();
            let inp = dev.buffer_from(&input).unwrap();
            k.launch(
                [grid, 1, 1],
                [block, 1, 1],
                4,
                &[Arg::Buffer(&out), Arg::Buffer(&inp), Arg::U32(n as u32)],
            )
            .unwrap();
            let got = common::words(&out.to_bytes());
            match &want {
                None => want = Some(got),
                Some(w) => assert_eq!(&got, w, "{backend:?} at {width:?} lanes, {grid} x {block}"),
            }
        }
        // The interpreter's own result, checked on the host.
        let w = want.unwrap();
        for c in 0..grid as usize {
            let slot = c * block as usize;
            let v = |t: u32| t * 1000 + 7;
            assert_eq!(w[slot], 100 + v(0), "CTA {c}");
            assert_eq!(
                w[n + slot],
                if block > 13 { 200 + v(13) } else { 0 },
                "CTA {c}"
            );
            for warp in 0..block.div_ceil(32) as usize {
                let t = 32 * warp as u32 + 2;
                let v = if t < block { 300 + v(t) } else { 0 };
                assert_eq!(w[2 * n + slot + warp], v, "CTA {c} warp {warp}");
            }
        }
    }
}
