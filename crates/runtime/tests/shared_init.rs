//! Launches skip clearing shared memory for kernels whose CTAs write it
//! before reading it (crates/cpu/src/shared_init.rs).
//!
//! `store_first` qualifies: every thread stores its word before the
//! barrier. Its CTAs, run one after the other on a worker's shared memory,
//! agree with the interpreter with 1 and 2 workers and 32, 16 and 8 lanes.
//! `store_some` (only even CTAs store) and `read_early` (a thread reads
//! before the barrier) do not qualify: their odd CTAs and their early read
//! see zeros, as on the interpreter, only because the clear stays.

use warpfold::{Arg, Backend, Device};

/// Kernel `name` of `kernels/shared_init.ptx` over `ctas` CTAs of 256
/// threads: the output, and on the compiled backend whether its launches
/// skip the clear.
fn run(
    name: &str,
    ctas: u32,
    backend: Backend,
    width: Option<u32>,
    threads: usize,
) -> (Vec<u32>, Option<bool>) {
    let dev = Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_threads(threads)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(include_str!("kernels/shared_init.ptx"), "shared_init.ptx")
        .expect("loads");
    let k = m.kernel(name).unwrap();
    // The last CTA has 56 threads past `n`.
    let n = ctas * 256 - 56;
    let input: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.5 + 1.0).collect();
    let a = dev.buffer_from(&input).unwrap();
    let out = dev.buffer_zeroed(n as usize * 4).unwrap();
    k.launch(
        [ctas, 1, 1],
        [256, 1, 1],
        0,
        &[Arg::Buffer(&a), Arg::Buffer(&out), Arg::I32(n as i32)],
    )
    .unwrap();
    let skips = (backend == Backend::Cpu).then(|| {
        let c = k.compiled([256, 1, 1]);
        c.as_ref().as_ref().expect("compiled").writes_shared_first()
    });
    let bits = out
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    (bits, skips)
}

#[test]
fn ctas_that_write_shared_memory_first_agree_without_the_clear() {
    for (name, skips) in [
        ("store_first", true),
        ("store_some", false),
        ("read_early", false),
    ] {
        let (want, _) = run(name, 12, Backend::Interp, None, 0);
        for width in [None, Some(16), Some(8)] {
            for threads in [1, 0] {
                let (got, skipped) = run(name, 12, Backend::Cpu, width, threads);
                let what = format!("{name}: {width:?} lanes, {threads} workers");
                assert_eq!(skipped, Some(skips), "{what}: skips the clear");
                assert!(got == want, "{what}: differs from the interpreter");
            }
        }
    }
}
