//! Bounds tests of a thread's index (`i < n`, `n >= i`, unsigned `i > lo`
//! and `lo <= i`, joined, negated, with a second result or an immediate)
//! guarding loads and stores and choosing values, which compiled code with
//! AVX-512 works out as lane bits from lane 0's index instead of comparing
//! the index vector: every bound around and inside the warps of a grid of
//! partial and whole warps, and an index that wraps past 2^31 (the vector
//! compare's path), on the interpreter and compiled at 32, 16 and 8 lanes
//! a warp, against the host.

mod common;

use warpfold::Arg;

/// Thread `i = ctaid * ntid + tid + base` of `len` threads writes a word
/// in each of `PARTS` parts of `len` words (`base` a parameter only in the
/// wrapping test: elsewhere the compiler knows `i` stays below 2^31, see
/// `with_base`):
/// 0. `in[i]` where `i < n` (a guarded load), else -1;
/// 1. 1 where `n >= i`, else 2 (a select, the index on the right);
/// 2. `i` where `i > lo` unsigned (a guarded store), else untouched (0);
/// 3. 7 where `i <= n` and `i >= lo` signed (two tests joined), else 9;
/// 4. `i` where not `i < lo` unsigned (a negated guard), else untouched;
/// 5. 3 where `i >= lo` unsigned (the second result of that `setp`),
///    else 4;
/// 6. 5 where `i > 40` and `i < n` (`setp.gt.and` with the guard of 0),
///    else 6;
/// 7. 8 where `lo <= i` unsigned (`ls`, the index on the right), else 1.
///
/// Slot `i - base` of each part belongs to thread `i`.
const BOUNDS: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry bounds(.param .u64 out, .param .u64 in, .param .u32 n, .param .u32 lo, .param .u32 base, .param .u32 len)
{
  .reg .pred %p<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [n];
  ld.param.u32 %r2, [lo];
  ld.param.u32 %r3, [base];
  ld.param.u32 %r4, [len];
  mov.u32 %r5, %ctaid.x;
  mov.u32 %r6, %ntid.x;
  mov.u32 %r7, %tid.x;
  mad.lo.s32 %r8, %r5, %r6, %r7;
  add.s32 %r9, %r8, %r3;
  mul.wide.u32 %rd2, %r8, 4;
  add.s64 %rd3, %rd0, %rd2;
  add.s64 %rd4, %rd1, %rd2;
  mul.wide.u32 %rd5, %r4, 4;
  mov.b32 %r10, -1;
  setp.lt.s32 %p0, %r9, %r1;
  @%p0 ld.global.u32 %r10, [%rd4];
  st.global.u32 [%rd3], %r10;
  setp.ge.s32 %p1, %r1, %r9;
  selp.b32 %r11, 1, 2, %p1;
  add.s64 %rd6, %rd3, %rd5;
  st.global.u32 [%rd6], %r11;
  setp.hi.u32 %p2, %r9, %r2;
  add.s64 %rd7, %rd6, %rd5;
  @%p2 st.global.u32 [%rd7], %r9;
  setp.le.s32 %p3, %r9, %r1;
  setp.ge.s32 %p4, %r9, %r2;
  and.pred %p5, %p3, %p4;
  selp.b32 %r12, 7, 9, %p5;
  add.s64 %rd8, %rd7, %rd5;
  st.global.u32 [%rd8], %r12;
  setp.lo.u32 %p6|%p7, %r9, %r2;
  add.s64 %rd9, %rd8, %rd5;
  @!%p6 st.global.u32 [%rd9], %r9;
  selp.b32 %r13, 3, 4, %p7;
  add.s64 %rd10, %rd9, %rd5;
  st.global.u32 [%rd10], %r13;
  setp.gt.and.s32 %p6, %r9, 40, %p0;
  selp.b32 %r14, 5, 6, %p6;
  add.s64 %rd11, %rd10, %rd5;
  st.global.u32 [%rd11], %r14;
  setp.ls.u32 %p7, %r2, %r9;
  selp.b32 %r15, 8, 1, %p7;
  add.s64 %rd12, %rd11, %rd5;
  st.global.u32 [%rd12], %r15;
  ret;
}
"#;

/// The parts `BOUNDS` writes.
const PARTS: usize = 8;

/// What `BOUNDS` writes, on the host.
fn expected(input: &[u32], n: i32, lo: u32, base: u32) -> Vec<u32> {
    let len = input.len();
    let mut out = vec![0u32; PARTS * len];
    for (k, &x) in input.iter().enumerate() {
        let i = (k as u32).wrapping_add(base);
        let si = i as i32;
        let mut part = |p: usize, v: u32| out[p * len + k] = v;
        part(0, if si < n { x } else { u32::MAX });
        part(1, if n >= si { 1 } else { 2 });
        part(2, if i > lo { i } else { 0 });
        part(3, if si <= n && si >= lo as i32 { 7 } else { 9 });
        part(4, if i >= lo { i } else { 0 });
        part(5, if i >= lo { 3 } else { 4 });
        part(6, if si > 40 && si < n { 5 } else { 6 });
        part(7, if lo <= i { 8 } else { 1 });
    }
    out
}

/// `BOUNDS` with `i = ctaid * ntid + tid` alone, or with the parameter
/// `base` added (an index of unknown range: it may wrap).
fn with_base(base: bool) -> String {
    if base {
        BOUNDS.to_string()
    } else {
        BOUNDS.replace("add.s32 %r9, %r8, %r3;", "mov.u32 %r9, %r8;")
    }
}

/// `BOUNDS` over `grid` CTAs of `block` threads on each of
/// `common::BACKENDS`, checked against the host.
fn check(grid: u32, block: u32, bounds: &[(i32, u32)], base: u32) {
    let ptx = with_base(base != 0);
    let len = (grid * block) as usize;
    let input: Vec<u32> = (0..len as u32).map(|k| k * 7 + 3).collect();
    for (backend, width) in common::BACKENDS {
        let dev = common::device(backend, width);
        let k = common::checked_kernel(&dev, &ptx, "bounds", [block, 1, 1]);
        let inp = dev.buffer_from(&input).unwrap();
        for &(n, lo) in bounds {
            let out = dev.buffer_zeroed(4 * PARTS * len).unwrap();
            let args = [
                Arg::Buffer(&out),
                Arg::Buffer(&inp),
                Arg::I32(n),
                Arg::U32(lo),
                Arg::U32(base),
                Arg::U32(len as u32),
            ];
            k.launch([grid, 1, 1], [block, 1, 1], 0, &args).unwrap();
            assert_eq!(
                common::words(&out.to_bytes()),
                expected(&input, n, lo, base),
                "{backend:?} at {width:?} lanes, n {n}, lo {lo}, base {base}"
            );
        }
    }
}

#[test]
fn bounds_tests_of_the_index_give_the_hosts_lanes() {
    let before = warpfold_cpu::index_masks();
    // Three CTAs of 80 threads: whole and partial warps at every width.
    let bounds: Vec<(i32, u32)> = [
        -7, 0, 1, 7, 8, 15, 16, 31, 32, 33, 79, 80, 100, 239, 240, 1000,
    ]
    .into_iter()
    .map(|n| (n, (n.max(0) as u32).wrapping_mul(3) % 250))
    .chain([(i32::MIN, u32::MAX), (i32::MAX, 0)])
    .collect();
    check(3, 80, &bounds, 0);
    // (Compiled code without AVX-512 keeps the vector compares.)
    if warpfold_cpu::code_target().contains("AVX-512") {
        assert!(
            warpfold_cpu::index_masks() > before,
            "no bounds test became lane bits"
        );
    }
}

#[test]
fn an_index_that_wraps_past_two_to_the_31_compares_lane_by_lane() {
    // Lanes of one warp straddle 2^31 - 1: the ones past it are negative.
    let base = (i32::MAX - 20) as u32;
    check(
        1,
        64,
        &[(i32::MAX, 0), (i32::MAX - 10, base), (0, base + 30)],
        base,
    );
}
