//! Stores in the arms of divergent ifs, which the compiled backend runs as
//! guarded (masked) stores after if-conversion, and a sorting network of
//! many such steps between barriers, whose small regions get region
//! functions however large its general warp function is. Both backends,
//! against values computed on the host.

mod common;

use warpfold::{Arg, Backend, Device};

/// One compare-exchange step on 64 keys in shared memory, swapping where
/// the keys are out of order (a data-dependent triangle of two stores), a
/// diamond storing different values to global memory in its two arms, and
/// a triangle storing twice to one word (the second store wins).
const STEP: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry step(.param .u64 out, .param .u64 keys)
{
  .reg .pred %p<4>;
  .reg .f32 %f<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  .shared .align 4 .b8 s[256];
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [keys];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  ld.global.f32 %f1, [%rd3+4];
  mov.u64 %rd4, s;
  add.s64 %rd5, %rd4, %rd2;
  st.shared.f32 [%rd5], %f0;
  st.shared.f32 [%rd5+4], %f1;
  bar.sync 0;
  // pos = 2t - (t & 1): pairs (0, 2), (1, 3), (4, 6), ...
  and.b32 %r1, %r0, 1;
  shl.b32 %r2, %r0, 1;
  sub.s32 %r3, %r2, %r1;
  mul.wide.s32 %rd6, %r3, 4;
  add.s64 %rd7, %rd4, %rd6;
  ld.shared.f32 %f2, [%rd7];
  ld.shared.f32 %f3, [%rd7+8];
  setp.gt.f32 %p0, %f2, %f3;
  @!%p0 bra KEEP;
  st.shared.f32 [%rd7], %f3;
  st.shared.f32 [%rd7+8], %f2;
KEEP:
  bar.sync 0;
  ld.shared.f32 %f0, [%rd5];
  ld.shared.f32 %f1, [%rd5+4];
  add.s64 %rd8, %rd0, %rd2;
  st.global.f32 [%rd8], %f0;
  st.global.f32 [%rd8+4], %f1;
  // out[64 + t]: 3t where t % 3 == 0, else t + 100
  mul.wide.u32 %rd9, %r0, 4;
  add.s64 %rd10, %rd0, %rd9;
  rem.u32 %r4, %r0, 3;
  setp.eq.u32 %p1, %r4, 0;
  @%p1 bra THREE;
  add.u32 %r5, %r0, 100;
  st.global.u32 [%rd10+256], %r5;
  bra.uni JOIN;
THREE:
  mul.lo.u32 %r5, %r0, 3;
  st.global.u32 [%rd10+256], %r5;
JOIN:
  // out[96 + t]: 7 where t & 4, else untouched (0); two stores, the last 7
  and.b32 %r6, %r0, 4;
  setp.eq.u32 %p2, %r6, 0;
  @%p2 bra DONE;
  st.global.u32 [%rd10+384], %r6;
  st.global.u32 [%rd10+384], 7;
DONE:
  ret;
}
"#;

/// What `STEP` writes for `keys` (64 of them).
fn step_on_host(keys: &[f32]) -> Vec<u32> {
    let mut s = keys.to_vec();
    for t in 0..32usize {
        let pos = 2 * t - (t & 1);
        if s[pos] > s[pos + 2] {
            s.swap(pos, pos + 2);
        }
    }
    let mut out: Vec<u32> = s.iter().map(|x| x.to_bits()).collect();
    out.extend((0..32u32).map(|t| if t % 3 == 0 { 3 * t } else { t + 100 }));
    out.extend((0..32u32).map(|t| if t & 4 != 0 { 7 } else { 0 }));
    out
}

/// Keys in a scrambled order, no two alike.
fn keys(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32 - 1e6)
        .collect()
}

#[test]
fn stores_in_divergent_arms_agree_with_the_host_on_both_backends() {
    let keys = keys(64, 7);
    let want = step_on_host(&keys);
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    let before = warpfold_cpu::if_converted_branches();
    for (backend, width) in [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ] {
        let got = common::words(&common::one_cta(
            STEP,
            "step",
            backend,
            width,
            &[&bytes],
            128 * 4,
        ));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g, w,
                "{backend:?} {width:?}: word {i}: {g:#x} instead of {w:#x}"
            );
        }
    }
    // The swap, the diamond and the double store's triangle, at each
    // width (the kernel is prepared twice a compilation).
    if std::env::var("WARPFOLD_IF_CONVERT").map_or(true, |v| v != "off") {
        assert!(warpfold_cpu::if_converted_branches() - before >= 3 * 2 * 3);
    }
}

/// Keys a CTA sorts: 1024, two a thread.
const SEG: u32 = 1024;

/// A bitonic sort of each CTA's 1024 keys, its network unrolled as NVRTC
/// unrolls the loops of `bench/bitonic/kernel.cu`: 55 steps, each a
/// barrier and one compare-exchange a thread, with registers of its own.
fn unrolled_bitonic() -> String {
    let mut body = String::new();
    let (mut r, mut f, mut p) = (10, 4, 0);
    let mut step = 0;
    let mut size = 2;
    while size <= SEG {
        let mut stride = size / 2;
        while stride > 0 {
            let (r0, r1, r2) = (r, r + 1, r + 2);
            let (fa, fb) = (f, f + 1);
            let (p0, p1, p2) = (p, p + 1, p + 2);
            let (d0, d1) = (2 * step + 20, 2 * step + 21);
            body.push_str(&format!(
                "  bar.sync 0;
  and.b32 %r{r0}, %r1, {mask};
  sub.s32 %r{r1}, %r2, %r{r0};
  mul.wide.s32 %rd{d0}, %r{r1}, 4;
  add.s64 %rd{d1}, %rd4, %rd{d0};
  ld.shared.f32 %f{fa}, [%rd{d1}];
  ld.shared.f32 %f{fb}, [%rd{d1}+{off}];
  and.b32 %r{r2}, %r1, {half};
  setp.ne.u32 %p{p0}, %r{r2}, 0;
  setp.gt.f32 %p{p1}, %f{fa}, %f{fb};
  xor.pred %p{p2}, %p{p1}, %p{p0};
  @!%p{p2} bra KEEP{step};
  st.shared.f32 [%rd{d1}], %f{fb};
  st.shared.f32 [%rd{d1}+{off}], %f{fa};
KEEP{step}:
",
                mask = stride - 1,
                off = 4 * stride,
                half = size / 2,
            ));
            r += 3;
            f += 2;
            p += 3;
            step += 1;
            stride /= 2;
        }
        size *= 2;
    }
    format!(
        r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry bitonic(.param .u64 out, .param .u64 keys)
{{
  .reg .pred %p<{p}>;
  .reg .f32 %f<{f}>;
  .reg .b32 %r<{r}>;
  .reg .b64 %rd<{rd}>;
  .shared .align 4 .b8 s[4096];
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [keys];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 1;
  shl.b32 %r3, %r0, 10;
  add.s32 %r4, %r3, %r1;
  mul.wide.s32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  ld.global.f32 %f1, [%rd3+2048];
  mov.u64 %rd4, s;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.shared.f32 [%rd6], %f0;
  st.shared.f32 [%rd6+2048], %f1;
{body}  bar.sync 0;
  ld.shared.f32 %f2, [%rd6];
  ld.shared.f32 %f3, [%rd6+2048];
  add.s64 %rd7, %rd0, %rd2;
  st.global.f32 [%rd7], %f2;
  st.global.f32 [%rd7+2048], %f3;
  ret;
}}
"#,
        rd = 2 * step + 22,
    )
}

#[test]
fn an_unrolled_sorting_network_sorts_on_both_backends_with_region_functions() {
    let ptx = unrolled_bitonic();
    let ctas = 3u32;
    let keys = keys((ctas * SEG) as usize, 11);
    let mut want = keys.clone();
    for seg in want.chunks_mut(SEG as usize) {
        seg.sort_by(f32::total_cmp);
    }
    let before = warpfold_cpu::small_region_kernels();
    for (backend, threads) in [(Backend::Interp, 1), (Backend::Cpu, 1), (Backend::Cpu, 2)] {
        let dev = Device::new()
            .with_backend(backend)
            .with_threads(threads)
            .with_disk_cache(None);
        let m = dev.load_ptx_named(&ptx, "bitonic.ptx").unwrap();
        let k = m.kernel("bitonic").unwrap();
        let (used, why) = k.effective_backend([512, 1, 1]);
        assert_eq!(used, backend, "{why:?}");
        let out = dev.buffer_zeroed(keys.len() * 4).unwrap();
        let input = dev.buffer_from(&keys).unwrap();
        k.launch(
            [ctas, 1, 1],
            [512, 1, 1],
            0,
            &[Arg::Buffer(&out), Arg::Buffer(&input)],
        )
        .unwrap();
        let got: Vec<f32> = out.to_vec().unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{backend:?}, {threads} threads: key {i}"
            );
        }
    }
    // Each step's region after if-conversion is a handful of instructions
    // while the general function holds all 55 steps.
    let defaults = ["WARPFOLD_IF_CONVERT", "WARPFOLD_REGIONS"]
        .iter()
        .all(|v| std::env::var(v).map_or(true, |v| v != "off"));
    if defaults {
        assert!(warpfold_cpu::small_region_kernels() > before);
    }
}
