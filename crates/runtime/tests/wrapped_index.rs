//! Accesses through an index that wraps round an array (`col = i + s; if
//! (col >= n) col -= n`, as NVRTC writes it: a compare, a `selp` of 0 or
//! `n` and a subtraction), which compiled code tests for consecutive lanes
//! from lane 0's values: loads with the signed `lt` form and the unsigned
//! `hs` form, and a store through the index, for array lengths and shifts
//! that put whole warps below `n`, whole warps past it and warps across
//! it, with partial warps, on the interpreter and compiled at 32, 16 and 8
//! lanes a warp, against the host.

mod common;

use warpfold::Arg;

/// Thread `i = ctaid * ntid + tid` of `len` threads, with `a = i + s`:
/// 0. `in[a < n ? a : a - n]` (signed `setp.lt`, `selp 0, n`) to part 0;
/// 1. `in[a >= n ? a - n : a]` (unsigned `setp.hs`, `selp n, 0`) to
///    part 1;
/// 2. where `i < n`: `i + 1` to part 2 at `a < n ? a : a - n`.
///
/// Part `p` is the `len` words from word `p * len` of `out`; slot `i` of
/// parts 0 and 1 belongs to thread `i`. `s` is a parameter, or the
/// constant 7 (see `with_shift`).
const WRAP: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry wrap(.param .u64 out, .param .u64 in, .param .u32 n, .param .u32 s, .param .u32 len)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [n];
  ld.param.u32 %r2, [s];
  ld.param.u32 %r3, [len];
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %ntid.x;
  mov.u32 %r6, %tid.x;
  mad.lo.s32 %r7, %r4, %r5, %r6;
  add.s32 %r8, %r7, %r2;
  mul.wide.u32 %rd2, %r7, 4;
  add.s64 %rd3, %rd0, %rd2;
  mul.wide.u32 %rd4, %r3, 4;
  setp.lt.s32 %p0, %r8, %r1;
  selp.b32 %r9, 0, %r1, %p0;
  sub.s32 %r10, %r8, %r9;
  mul.wide.s32 %rd5, %r10, 4;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.u32 %r11, [%rd6];
  st.global.u32 [%rd3], %r11;
  setp.hs.u32 %p1, %r8, %r1;
  selp.b32 %r12, %r1, 0, %p1;
  sub.s32 %r13, %r8, %r12;
  mul.wide.u32 %rd7, %r13, 4;
  add.s64 %rd8, %rd1, %rd7;
  ld.global.u32 %r14, [%rd8];
  add.s64 %rd9, %rd3, %rd4;
  st.global.u32 [%rd9], %r14;
  setp.lt.u32 %p2, %r7, %r1;
  add.s32 %r15, %r7, 1;
  add.s64 %rd10, %rd0, %rd4;
  add.s64 %rd12, %rd10, %rd4;
  add.s64 %rd11, %rd12, %rd5;
  @%p2 st.global.u32 [%rd11], %r15;
  ret;
}
"#;

/// The parts `WRAP` writes.
const PARTS: usize = 3;

/// What `WRAP` writes, on the host.
fn expected(input: &[u32], len: usize, n: u32, s: u32) -> Vec<u32> {
    let mut out = vec![0u32; PARTS * len];
    for i in 0..len as u32 {
        let a = i + s;
        let x = if (a as i32) < n as i32 { a } else { a - n };
        out[i as usize] = input[x as usize];
        let y = if a >= n { a - n } else { a };
        out[len + i as usize] = input[y as usize];
        if i < n {
            out[2 * len + x as usize] = i + 1;
        }
    }
    out
}

/// `WRAP` with the shift `s` its parameter (a sum of unknown range, which
/// the code tests for wrapping past 2^31), or the constant 7.
fn with_shift(param: bool) -> String {
    if param {
        WRAP.to_string()
    } else {
        WRAP.replace("add.s32 %r8, %r7, %r2;", "add.s32 %r8, %r7, 7;")
    }
}

/// `WRAP` with the length the loads compare with the constant `n` (the
/// store still takes the parameter: launches pass the same).
fn with_length(ptx: &str, n: u32) -> String {
    ptx.replace("%r8, %r1;", &format!("%r8, {n};"))
        .replace("selp.b32 %r9, 0, %r1,", &format!("selp.b32 %r9, 0, {n},"))
        .replace("selp.b32 %r12, %r1, 0,", &format!("selp.b32 %r12, {n}, 0,"))
}

/// `ptx` (`WRAP` in one of its forms) over `grid` CTAs of `block` threads
/// for each `(n, s)` (`s` ignored with `param` false: it is 7) on each of
/// `common::BACKENDS`, checked against the host; compiled at 32 lanes, its
/// three accesses take the wrapped-index test.
fn check_ptx(ptx: &str, grid: u32, block: u32, cases: &[(u32, u32)], param: bool) {
    let len = (grid * block) as usize;
    for (backend, width) in common::BACKENDS {
        let dev = common::device(backend, width);
        let before = warpfold_cpu::wrapped_indices();
        let k = common::checked_kernel(&dev, ptx, "wrap", [block, 1, 1]);
        let mut first = true;
        for &(n, s) in cases {
            let s = if param { s } else { 7 };
            // Indices stay below `len + n`; stores below `n` (at most `len`).
            assert!(s < n && n as usize <= len);
            let input: Vec<u32> = (0..(len + n as usize) as u32).map(|k| k * 5 + 1).collect();
            let inp = dev.buffer_from(&input).unwrap();
            let out = dev.buffer_zeroed(4 * PARTS * len).unwrap();
            let args = [
                Arg::Buffer(&out),
                Arg::Buffer(&inp),
                Arg::U32(n),
                Arg::U32(s),
                Arg::U32(len as u32),
            ];
            k.launch([grid, 1, 1], [block, 1, 1], 0, &args).unwrap();
            if std::mem::take(&mut first) && width == Some(32) {
                assert!(
                    warpfold_cpu::wrapped_indices() - before >= 3,
                    "an access missed the wrapped-index test"
                );
            }
            assert_eq!(
                common::words(&out.to_bytes()),
                expected(&input, len, n, s),
                "{backend:?} at {width:?} lanes, n {n}, s {s}"
            );
        }
    }
}

/// Array lengths and shifts over three CTAs of 80 threads: the wrap at a
/// warp's first lane, its last, inside it, in a partial warp, and beyond
/// every warp.
fn cases() -> Vec<(u32, u32)> {
    [8, 9, 16, 17, 31, 32, 33, 64, 79, 80, 100, 200, 239, 240]
        .into_iter()
        .flat_map(|n| [(n, 0), (n, 1), (n, n / 2), (n, n - 1), (n, 7.min(n - 1))])
        .collect()
}

#[test]
fn wrapped_indices_read_and_write_the_hosts_elements() {
    check_ptx(&with_shift(true), 3, 80, &cases(), true);
}

#[test]
fn wrapped_indices_of_a_known_range_read_and_write_the_hosts_elements() {
    let cases: Vec<(u32, u32)> = cases().into_iter().filter(|&(n, _)| n > 7).collect();
    check_ptx(&with_shift(false), 3, 80, &cases, false);
}

#[test]
fn indices_wrapped_round_a_constant_length_read_and_write_the_hosts_elements() {
    for n in [17, 100, 240] {
        let cases: Vec<(u32, u32)> = cases().into_iter().filter(|&(m, _)| m == n).collect();
        check_ptx(&with_length(&with_shift(true), n), 3, 80, &cases, true);
    }
}
