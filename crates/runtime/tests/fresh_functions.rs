//! A large barrier-free kernel of whole warps still gets its structured
//! whole-warp function (`@wf_fresh`, see `FRESH_LOOP_BELOW_BYTES` in
//! crates/cpu/src/emit.rs): the suite's batched LU factorisation, whose
//! unrolled general function is about a megabyte of IR. It must give the
//! interpreter's bits, on one worker and on all. (The kernel has no
//! bounds test: batches fill whole CTAs of 16 systems.) The kernel is the
//! benchmark's own source, through NVRTC (WARPFOLD_SKIP_NVRTC=1 skips).

use warpfold::{nvrtc, Arg, Backend, Device};

const N: usize = 16;

/// `x` for `batch` systems on `backend` with `threads` workers (0: all),
/// and on the compiled backend the kernel's LLVM IR.
fn solve(backend: Backend, threads: usize, batch: usize) -> (Vec<u32>, Option<String>) {
    let dev = Device::new().with_backend(backend).with_threads(threads);
    let src = include_str!("../../../bench/batched_lu/kernel.cu");
    let (m, _) = dev
        .load_cuda(src, "batched_lu.cu", &nvrtc::Options::default())
        .expect("NVRTC compiles the benchmark's LU kernel");
    let k = m.kernel("lu_solve").unwrap();
    let block = [256, 1, 1];
    assert_eq!(k.effective_backend(block).0, backend);
    // Rows of a diagonally dominant matrix (the kernel adds N on the
    // diagonal), right-hand sides of mixed signs.
    let a: Vec<f32> = (0..batch * N * N)
        .map(|i| ((i as u64 * 2_654_435_761) % 1000) as f32 / 1000.0 - 0.25)
        .collect();
    let b: Vec<f32> = (0..batch * N).map(|i| (i % 17) as f32 - 8.0).collect();
    let (da, db) = (dev.buffer_from(&a).unwrap(), dev.buffer_from(&b).unwrap());
    let dx = dev.buffer_zeroed(batch * N * 4).unwrap();
    let ctas = (batch * N).div_ceil(256) as u32;
    k.launch(
        [ctas, 1, 1],
        block,
        0,
        &[
            Arg::Buffer(&da),
            Arg::Buffer(&db),
            Arg::Buffer(&dx),
            Arg::I32(batch as i32),
        ],
    )
    .unwrap();
    let ir = (backend == Backend::Cpu).then(|| {
        let c = k.compiled(block);
        c.as_ref().as_ref().unwrap().llvm_ir.clone()
    });
    (dx.to_vec::<u32>().unwrap(), ir)
}

#[test]
fn batched_lu_takes_the_whole_warp_function_and_agrees_with_the_interpreter() {
    if std::env::var_os("WARPFOLD_SKIP_NVRTC").is_some() {
        return;
    }
    for batch in [48, 16] {
        let (want, _) = solve(Backend::Interp, 1, batch);
        for threads in [1, 0] {
            let (got, ir) = solve(Backend::Cpu, threads, batch);
            assert_eq!(got, want, "batch {batch}, {threads} workers");
            let ir = ir.unwrap();
            // Its general function alone is about 1 MB (over the old
            // 250 KB limit, so this still tests the limit).
            assert!(ir.len() > 500_000, "{} bytes of IR", ir.len());
            assert!(ir.contains("define internal i32 @wf_fresh"), "no @wf_fresh");
        }
    }
}
