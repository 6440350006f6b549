//! A region between two barriers that is straight-line float arithmetic
//! (a tiled product's inner loop, unrolled) runs for two warps at once on
//! the compiled backend, their instructions interleaved (the cpu crate's
//! `warp_pairs`). Results stay bit for bit the interpreter's: CTAs of
//! 8 and 6 warps (all in pairs), 5 (one left over), 4.5 (a partial last
//! warp, which the round loop runs on its own), one worker and all cores,
//! and with warps of 16 and 8 lanes (which do not pair); and the region
//! really is interleaved.

use warpfold::{Arg, Backend, Device};

/// The product of two `n` x `n` matrices in blocks of 16 x `rows`
/// threads, on `backend` with `threads` workers and warps of `width`
/// lanes: the output's bits.
fn product(backend: Backend, threads: usize, width: Option<u32>, n: usize, rows: u32) -> Vec<u32> {
    let dev = Device::new()
        .with_backend(backend)
        .with_threads(threads)
        .with_warp_width(width)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(include_str!("kernels/warp_pairs.ptx"), "warp_pairs.ptx")
        .expect("loads");
    let k = m.kernel("tile_product").unwrap();
    let block = [16, rows, 1];
    assert_eq!(k.effective_backend(block).1, None, "compiles");
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919) % 1013) as f32 / 97.0 - 5.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 104_729) % 911) as f32 / 113.0 - 4.0)
        .collect();
    let (da, db) = (dev.buffer_from(&a).unwrap(), dev.buffer_from(&b).unwrap());
    let dc = dev.buffer_zeroed(n * n * 4).unwrap();
    let grid = [(n as u32).div_ceil(16), (n as u32).div_ceil(rows), 1];
    k.launch(
        grid,
        block,
        0,
        &[
            Arg::Buffer(&dc),
            Arg::Buffer(&da),
            Arg::Buffer(&db),
            Arg::I32(n as i32),
        ],
    )
    .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
    dc.to_vec::<u32>().unwrap()
}

#[test]
fn two_warps_through_a_region_agree_with_the_interpreter() {
    let before = warpfold_cpu::warp_pair_blocks();
    // 40 is not a multiple of 16: tiles at the edge read zeros.
    let n = 40;
    for rows in [16, 12, 10, 9] {
        let want = product(Backend::Interp, 1, None, n, rows);
        for width in [Some(32), Some(16), Some(8)] {
            for threads in [1, 0] {
                let got = product(Backend::Cpu, threads, width, n, rows);
                let diff = want.iter().zip(&got).position(|(x, y)| x != y);
                assert_eq!(
                    diff, None,
                    "blocks of 16 x {rows}, {width:?} lanes, {threads} workers: element {diff:?} differs"
                );
            }
        }
    }
    if !std::env::var("WARPFOLD_PAIRS").is_ok_and(|x| x == "off") {
        assert!(
            warpfold_cpu::warp_pair_blocks() > before,
            "no region ran two warps interleaved"
        );
    }
}
