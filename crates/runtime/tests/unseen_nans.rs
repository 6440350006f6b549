//! NaN payloads through registers whose bits nothing observes. PTX
//! arithmetic gives the canonical NaN (0x7fffffff); a load, move or select
//! keeps a NaN's bits. The compiled backend lets x86 arithmetic leave its
//! NaNs where no instruction shows their bits, and a register read only by
//! arithmetic, IEEE division and selects into such registers may then hold
//! any NaN, even a loaded one (batched LU's right-hand side). This checks
//! that every value that reaches memory still has PTX's bits: through a
//! select chain into a division or an add (canonical), and a loaded NaN
//! selected straight into a store (its payload), and a loaded word that a
//! shuffle reads both as its value and as its source lane (the lane is its
//! bits: a review found the value's laziness once canonicalised them).
//! Both backends, warps of 32, 16 and 8 lanes, against the host.

mod common;

use warpfold::Backend;

const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry unseen(.param .u64 po, .param .u64 pa)
{
  .reg .f32 %f<12>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pa];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  ld.global.f32 %f1, [%rd3+4];
  and.b32 %r1, %r0, 1;
  setp.eq.u32 %p0, %r1, 0;
  and.b32 %r2, %r0, 2;
  setp.eq.u32 %p1, %r2, 0;
  // y1 = p0 ? y0 - x : y0, y2 = p1 ? y1 - x : y1 (y0, y1, y2 never shown)
  sub.f32 %f2, %f0, %f1;
  selp.f32 %f3, %f2, %f0, %p0;
  sub.f32 %f4, %f3, %f1;
  selp.f32 %f5, %f4, %f3, %p1;
  div.rn.f32 %f6, %f5, 0f40000000;
  add.f32 %f7, %f5, 0f3F800000;
  // a loaded NaN selected into a register that is stored: its bits
  selp.f32 %f8, %f0, %f1, %p0;
  mul.wide.u32 %rd2, %r0, 12;
  add.s64 %rd4, %rd0, %rd2;
  st.global.f32 [%rd4], %f6;
  st.global.f32 [%rd4+4], %f7;
  st.global.f32 [%rd4+8], %f8;
  ret;
}
"#;

/// PTX's result bits for a value computed on the host.
fn ptx_bits(x: f32) -> u32 {
    if x.is_nan() {
        0x7fff_ffff
    } else {
        x.to_bits()
    }
}

/// Kernel `name` of `ptx` (arguments: output, input) on the interpreter
/// and compiled at 32, 16 and 8 lanes: each run's label and its
/// `out_words` output words.
fn on_every_backend(
    ptx: &str,
    name: &str,
    input: &[u32],
    out_words: usize,
) -> Vec<(String, Vec<u32>)> {
    let input: &[u8] = bytemuck::cast_slice(input);
    [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ]
    .into_iter()
    .map(|(backend, width)| {
        let out = common::one_cta(ptx, name, backend, width, &[input], out_words * 4);
        (format!("{backend:?} {width:?}"), common::words(&out))
    })
    .collect()
}

#[test]
fn nans_nothing_observes_still_reach_memory_with_ptx_bits() {
    let nans = [0x7fc0_1234u32, 0xffff_ffdf, 0x7f80_0001, 0xffc0_0000];
    let vals = [1.5f32, -2.0, 0.0, 3.25];
    // (y0, x) per thread: payload NaNs and numbers in both places.
    let pairs: Vec<(u32, u32)> = (0..32u32)
        .map(|i| {
            let pick = |k: u32| {
                if k % 3 == 0 {
                    nans[(k / 3 % 4) as usize]
                } else {
                    vals[(k % 4) as usize].to_bits()
                }
            };
            (pick(i), pick(i / 2 + 1))
        })
        .collect();
    let input: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let want: Vec<u32> = pairs
        .iter()
        .enumerate()
        .flat_map(|(i, &(a, b))| {
            let (y0, x) = (f32::from_bits(a), f32::from_bits(b));
            let y1 = if i & 1 == 0 { y0 - x } else { y0 };
            let y2 = if i & 2 == 0 { y1 - x } else { y1 };
            let picked = if i & 1 == 0 { a } else { b };
            [ptx_bits(y2 / 2.0), ptx_bits(y2 + 1.0), picked]
        })
        .collect();
    for (run, got) in on_every_backend(PTX, "unseen", &input, 32 * 3) {
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "{run}: thread {}, output {}: {g:#x} instead of {w:#x}",
                i / 3,
                i % 3
            );
        }
    }
}

const SHFL_PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry lane_from_bits(.param .u64 po, .param .u64 pa)
{
  .reg .f32 %f<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pa];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r1, [%rd3];
  // the loaded word is the value and the source lane: its bits count
  shfl.sync.idx.b32 %r2, %r1, %r1, 31, -1;
  mov.b32 %f0, %r2;
  add.f32 %f1, %f0, 0f3F800000;
  add.s64 %rd4, %rd0, %rd2;
  st.global.f32 [%rd4], %f1;
  ret;
}
"#;

#[test]
fn a_shuffle_reading_a_word_as_value_and_lane_keeps_its_bits() {
    // NaNs whose low bits pick lanes holding numbers (the canonical NaN
    // would pick lane 31, another number), and numbers.
    let input: Vec<u32> = (0..32u32)
        .map(|i| match i % 4 {
            0 => 0x7fc0_0000 | ((i + 2) % 32),
            1 => 0xffc0_0000 | ((i + 5) % 32),
            2 => (i as f32 * 0.75).to_bits(),
            _ => (i as f32 * -1.25).to_bits(),
        })
        .collect();
    let want: Vec<u32> = input
        .iter()
        .map(|&x| ptx_bits(f32::from_bits(input[(x & 31) as usize]) + 1.0))
        .collect();
    for (run, got) in on_every_backend(SHFL_PTX, "lane_from_bits", &input, 32) {
        assert_eq!(got, want, "{run}");
    }
}
