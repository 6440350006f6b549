//! Blocks narrower than a warp: the compiled backend packs 32 / n CTAs of
//! n threads into one warp when that cannot change what any CTA does, and
//! compiles one CTA per warp otherwise. Either way the results must be the
//! interpreter's, for every block shape and for grids that leave the last
//! warp part-empty.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/packing.ptx"), "packing.ptx")
        .expect("loads")
}

/// Real CTAs per warp of the compiled kernel for blocks of `block`.
fn packed(m: &Module, kernel: &str, block: [u32; 3]) -> u32 {
    match &*m.kernel(kernel).unwrap().compiled(block) {
        Ok(k) => k.ctas_per_warp(),
        Err(e) => panic!("{kernel} does not compile for {block:?}: {e}"),
    }
}

/// Runs `kernel` on both backends with buffers holding `inputs` and
/// returns each backend's final buffers (the first of each is the input).
fn both(
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    inputs: &[Vec<u32>],
    scalars: &[i32],
) -> [Vec<Vec<u32>>; 2] {
    [Backend::Cpu, Backend::Interp].map(|backend| {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let bufs: Vec<_> = inputs.iter().map(|v| dev.buffer_from(v).unwrap()).collect();
        let mut args: Vec<Arg> = bufs.iter().map(Arg::Buffer).collect();
        args.extend(scalars.iter().map(|&v| Arg::I32(v)));
        m.kernel(kernel)
            .unwrap()
            .launch(grid, block, 0, &args)
            .unwrap_or_else(|e| panic!("{kernel} {grid:?} {block:?} on {backend:?}: {e}"));
        bufs.iter().map(|b| b.to_vec::<u32>().unwrap()).collect()
    })
}

fn floats(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| (((i.wrapping_mul(2654435761) ^ seed) % 1000) as f32 * 0.25 - 100.0).to_bits())
        .collect()
}

#[test]
fn packed_threads_know_their_block_thread_lane_and_frame() {
    let dev = Device::new();
    let m = module(&dev);
    let shapes: [([u32; 3], [u32; 3]); 9] = [
        ([7, 1, 1], [1, 1, 1]),
        ([13, 1, 1], [2, 1, 1]),
        ([5, 3, 1], [4, 1, 1]),
        ([9, 1, 2], [8, 1, 1]),
        ([3, 1, 1], [16, 1, 1]),
        ([6, 2, 1], [4, 4, 1]),
        ([5, 1, 1], [2, 2, 2]),
        ([4, 1, 1], [8, 2, 1]),
        ([2, 1, 1], [32, 1, 1]),
    ];
    for (grid, block) in shapes {
        let nt: u32 = block.iter().product();
        let expect = if nt < 32 { 32 / nt } else { 1 };
        assert_eq!(packed(&m, "who_am_i", block), expect, "{block:?}");
        let n = (grid.iter().product::<u32>() * nt) as usize;
        // The last block's last thread stays out (g >= n).
        let out = both(
            "who_am_i",
            grid,
            block,
            &[vec![7; 8 * n], vec![0; n], floats(n, 1)],
            &[n as i32 - 1],
        );
        assert_eq!(out[0], out[1], "grid {grid:?} block {block:?}");
    }
}

#[test]
fn shuffles_stay_inside_each_packed_block() {
    let dev = Device::new();
    let m = module(&dev);
    for (grid, block) in [
        ([5, 1, 1], [8, 1, 1]),
        ([3, 1, 1], [16, 1, 1]),
        ([2, 1, 1], [32, 1, 1]),
    ] {
        let nt = block[0];
        assert_eq!(
            packed(&m, "block_shuffles", block),
            32 / nt.min(32),
            "{block:?}"
        );
        let n = (grid[0] * nt) as usize;
        let out = both(
            "block_shuffles",
            grid,
            block,
            &[floats(n, 9), vec![0; 3 * n]],
            &[],
        );
        assert_eq!(out[0], out[1], "grid {grid:?} block {block:?}");
    }
}

#[test]
fn warp_wide_operations_keep_one_block_per_warp() {
    let dev = Device::new();
    let m = module(&dev);
    let block = [16, 1, 1];
    assert_eq!(packed(&m, "block_ballot", block), 1);
    assert_eq!(packed(&m, "block_dependent_shuffle", block), 1);
    let x: Vec<u32> = (0..80u32)
        .map(|i| (i * 7919 % 13) as u32)
        .map(|v| v.wrapping_sub(6))
        .collect();
    let a = both(
        "block_ballot",
        [5, 1, 1],
        block,
        &[x.clone(), vec![0; 80]],
        &[],
    );
    assert_eq!(a[0], a[1]);
    let b = both(
        "block_dependent_shuffle",
        [5, 1, 1],
        block,
        &[x, vec![0; 80]],
        &[],
    );
    assert_eq!(b[0], b[1]);
}

#[test]
fn printf_assert_and_trap_in_small_blocks_name_the_block_and_thread() {
    use std::sync::{Arc, Mutex};
    let block = [4, 1, 1];
    let mut outs = Vec::new();
    for backend in [Backend::Cpu, Backend::Interp] {
        // One worker: CTAs in order, so the printed lines are comparable.
        let buf = Arc::new(Mutex::new(String::new()));
        let dev = Device::new()
            .with_backend(backend)
            .with_threads(1)
            .with_printf_buffer(buf.clone());
        let m = module(&dev);
        let k = m.kernel("checked_double").unwrap();
        if backend == Backend::Cpu {
            assert_eq!(k.effective_backend(block), (Backend::Cpu, None));
            // Host calls keep one block per warp: packed blocks would
            // print and fault in another order than one after another.
            assert_eq!(packed(&m, "checked_double", block), 1);
        }
        let a: Vec<i32> = (0..12).map(|i| i * 3).collect();
        let da = dev.buffer_from(&a).unwrap();
        let out = dev.buffer_zeroed(48).unwrap();
        k.launch([3, 1, 1], block, 0, &[Arg::Buffer(&da), Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(
            out.to_vec::<i32>().unwrap(),
            a.iter().map(|v| 2 * v).collect::<Vec<_>>()
        );
        outs.push(buf.lock().unwrap().clone());
        for (i, bad, what) in [(9, -4, "assertion `a[g] >= 0` failed"), (6, 1000, "trap")] {
            let mut a = a.clone();
            a[i] = bad;
            let da = dev.buffer_from(&a).unwrap();
            out.write(&[0i32; 12]).unwrap();
            let e = k
                .launch([3, 1, 1], block, 0, &[Arg::Buffer(&da), Arg::Buffer(&out)])
                .unwrap_err()
                .to_string();
            let at = format!("block ({},0,0), thread ({},0,0)", i / 4, i % 4);
            assert!(
                e.contains(what) && e.contains(&at) && e.contains("checked_double"),
                "{backend:?}: {e}"
            );
            // The faulting thread stops there.
            assert_eq!(out.to_vec::<i32>().unwrap()[i], 0, "{backend:?}");
        }
    }
    assert_eq!(outs[0], "0:0=0\n1:1=15\n2:2=30\n");
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn packed_blocks_each_have_their_own_shared_memory() {
    let dev = Device::new();
    let m = module(&dev);
    for (grid, block) in [
        ([9, 1, 1], [4, 1, 1]),
        ([7, 1, 1], [8, 1, 1]),
        ([5, 1, 1], [16, 1, 1]),
    ] {
        assert_eq!(
            packed(&m, "block_reverse", block),
            32 / block[0],
            "{block:?}"
        );
        let n = (grid[0] * block[0]) as usize;
        let out = both(
            "block_reverse",
            grid,
            block,
            &[floats(n, 5), vec![0; n]],
            &[],
        );
        assert_eq!(out[0], out[1], "grid {grid:?} block {block:?}");
    }
    let block = [8, 1, 1];
    assert_eq!(packed(&m, "block_dependent_barrier", block), 1);
    let out = both(
        "block_dependent_barrier",
        [7, 1, 1],
        block,
        &[vec![0; 56]],
        &[],
    );
    assert_eq!(out[0], out[1]);
}

#[test]
fn a_butterfly_that_would_cross_into_the_next_block_is_not_packed() {
    let dev = Device::new();
    let m = module(&dev);
    for (block, expect) in [([8, 1, 1], 1), ([16, 1, 1], 2)] {
        assert_eq!(packed(&m, "xor_past_segment", block), expect, "{block:?}");
        let n = 4 * block[0] as usize;
        let x = floats(n, 3);
        let out = both(
            "xor_past_segment",
            [4, 1, 1],
            block,
            &[x.clone(), vec![0; n]],
            &[],
        );
        assert_eq!(out[0], out[1], "{block:?}");
        // Threads 0-7 of a block find lane t^8 past their segment and keep
        // their value; threads 8-15 read 0-7 (still within their limit).
        let res = &out[0][1];
        assert_eq!(res[..8], x[..8], "{block:?}");
        let second = if block[0] == 16 { &x[..8] } else { &x[8..16] };
        assert_eq!(res[8..16], *second, "{block:?}");
    }
}

#[test]
fn blocks_with_no_threads_are_an_error_not_a_crash() {
    let dev = Device::new();
    let m = module(&dev);
    let out = dev.buffer_zeroed(64).unwrap();
    for block in [[0, 1, 1], [4, 0, 1], [65536, 65536, 1]] {
        let e = m
            .kernel("block_ballot")
            .unwrap()
            .launch([1, 1, 1], block, 0, &[Arg::Buffer(&out), Arg::Buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("block"), "{block:?}: {e}");
    }
}
