//! A barrier-free kernel's one round unrolled over the CTA's warps
//! (`FreshRound::Unrolled` in crates/cpu/src/emit.rs): the compiled
//! backend agrees with the interpreter whether every warp finishes in it,
//! some yield and finish through the round loop (long loops), or the
//! block leaves a partial warp (then the round is not unrolled). Warps
//! of 32 and 16 lanes, one and two workers.

use warpfold::{Arg, Backend, Device};

/// `spin_sum` over `trips.len()` CTAs of `block` threads: the output,
/// and on the compiled backend the kernel's LLVM IR and warp width.
fn run(
    trips: &[i32],
    block: u32,
    backend: Backend,
    (width, threads): (Option<u32>, usize),
) -> (Vec<i32>, Option<(String, u32)>) {
    let dev = Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_threads(threads)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(
            include_str!("kernels/fresh_unrolled.ptx"),
            "fresh_unrolled.ptx",
        )
        .expect("loads");
    let k = m.kernel("spin_sum").unwrap();
    assert_eq!(k.effective_backend([block, 1, 1]).0, backend);
    let n = trips.len() * block as usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7919 - 40_000).collect();
    let a = dev.buffer_from(&input).unwrap();
    let tr = dev.buffer_from(trips).unwrap();
    let out = dev.buffer_zeroed(n * 4).unwrap();
    k.launch(
        [trips.len() as u32, 1, 1],
        [block, 1, 1],
        0,
        &[Arg::Buffer(&a), Arg::Buffer(&tr), Arg::Buffer(&out)],
    )
    .unwrap();
    let ir = (backend == Backend::Cpu).then(|| {
        let c = k.compiled([block, 1, 1]);
        let c = c.as_ref().as_ref().unwrap();
        (c.llvm_ir.clone(), c.warp_lanes())
    });
    (out.to_vec::<i32>().unwrap(), ir)
}

#[test]
fn an_unrolled_first_round_agrees_with_the_interpreter() {
    // Short loops everywhere, then CTAs whose lanes loop up to 60000 times
    // (past the yield budget), then a mix.
    let cases: [&[i32]; 3] = [
        &[0, 1, 5, 9, 3, 2],
        &[60_000, 3, 40_000],
        &[7, 30_000, 0, 100],
    ];
    for trips in cases {
        for block in [128u32, 256, 100] {
            let (want, _) = run(trips, block, Backend::Interp, (None, 0));
            for width in [None, Some(16)] {
                for threads in [1, 0] {
                    let (got, ir) = run(trips, block, Backend::Cpu, (width, threads));
                    assert_eq!(
                        got, want,
                        "{trips:?}, {block} threads, {width:?} lanes, {threads} workers"
                    );
                    let (ir, lanes) = ir.unwrap();
                    let unrolled = block % lanes == 0 && block / lanes <= 8;
                    assert_eq!(
                        ir.contains("\nuf_in:"),
                        unrolled,
                        "{block} threads, {lanes} lanes: the first round unrolled"
                    );
                }
            }
        }
    }
}
