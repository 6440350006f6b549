//! A sorting network of many small steps between barriers (a bitonic sort
//! unrolled as NVRTC unrolls it) gets region functions however large its
//! general warp function is; a barrier no path reaches does not upset
//! that choice. Both backends, against the host.

mod common;

use warpfold::{Arg, Backend, Device};

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
fn an_unrolled_sorting_network_sorts_on_both_backends_through_region_functions() {
    let ptx = unrolled_bitonic();
    let ctas = 3u32;
    let keys = common::scrambled_keys((ctas * SEG) as usize, 11);
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
        let k = common::checked_kernel(&dev, &ptx, "bitonic", [512, 1, 1]);
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
    // while the general function holds all 55 steps: the regions get
    // functions all the same.
    let defaults = ["WARPFOLD_IF_CONVERT", "WARPFOLD_REGIONS"]
        .iter()
        .all(|v| std::env::var(v).map_or(true, |v| v != "off"));
    if defaults {
        assert!(warpfold_cpu::small_region_kernels() > before);
    }
}

/// Two barriers, the second in a block no path reaches, whose successor
/// is unreachable too (it has no block id).
const DEAD_BARRIER: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry dead(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  bar.sync 0;
  st.global.u32 [%rd2], %r0;
  ret;
  bar.sync 0;
DEAD:
  ret;
}
"#;

#[test]
fn a_barrier_no_path_reaches_compiles_and_runs() {
    // 8 warps (rounds unrolled over the warps) and 16.
    for (backend, threads) in [
        (Backend::Interp, 512),
        (Backend::Cpu, 256),
        (Backend::Cpu, 512),
    ] {
        let dev = Device::new().with_backend(backend).with_disk_cache(None);
        let k = common::checked_kernel(&dev, DEAD_BARRIER, "dead", [threads, 1, 1]);
        let out = dev.buffer_zeroed(threads as usize * 4).unwrap();
        k.launch([1, 1, 1], [threads, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let got: Vec<u32> = out.to_vec().unwrap();
        let ok = got.iter().enumerate().all(|(t, v)| *v == t as u32);
        assert!(ok, "{backend:?}, {threads} threads");
    }
}
