//! Whole-warp copies of blocks: after a barrier, branches that keep every
//! lane of a full warp together run copies of their blocks with a constant
//! mask. Warps split by a branch, partial warps and loops that alternate
//! between the two must give the interpreter's results.

use warpfold::{Arg, Backend, Device};

fn ptx() -> &'static str {
    include_str!("kernels/whole_warps.ptx")
}

/// The kernel's output on `backend` with `width`-lane warps.
fn run(backend: Backend, width: Option<u32>, name: &str, block: u32, ints: &[i32]) -> Vec<f32> {
    let dev = Device::new().with_backend(backend).with_warp_width(width);
    let m = dev.load_ptx_named(ptx(), "whole_warps.ptx").expect("loads");
    let k = m.kernel(name).unwrap();
    assert_eq!(k.effective_backend([block, 1, 1]).0, backend, "{name}");
    let n = 2 * block as usize;
    // Past the grid's elements: trips of `march_in_general_function`.
    let input: Vec<f32> = (0..n + 64)
        .map(|i| ((i * 37) % 101) as f32 * 0.5 - 7.0)
        .collect();
    let a = dev.buffer_from(&input).unwrap();
    let out = dev.buffer_zeroed(n * 4).unwrap();
    let mut args = vec![Arg::Buffer(&a), Arg::Buffer(&out)];
    args.extend(ints.iter().map(|v| Arg::I32(*v)));
    k.launch([2, 1, 1], [block, 1, 1], 0, &args).unwrap();
    out.to_vec::<f32>().unwrap()
}

const WIDTHS: [Option<u32>; 3] = [None, Some(8), Some(16)];

#[test]
fn branches_after_a_barrier_that_keep_or_split_warps_match_the_interpreter() {
    for block in [64, 80, 128] {
        let none = run(Backend::Interp, None, "split_after_barrier", block, &[0]);
        for k in [0, 10, 32, 40, 64, 72, 80, 128] {
            let want = run(Backend::Interp, None, "split_after_barrier", block, &[k]);
            // The lanes that take the branch show in the output.
            assert!(k == 0 || want != none, "block {block} k {k}");
            for width in WIDTHS {
                let got = run(Backend::Cpu, width, "split_after_barrier", block, &[k]);
                assert_eq!(got, want, "block {block} k {k} width {width:?}");
            }
        }
    }
}

#[test]
fn loops_whose_warps_alternate_between_whole_and_split_match_the_interpreter() {
    for block in [64, 80, 128] {
        for (trips, split) in [(0, 0), (1, 0), (7, 0), (8, 1), (13, 0), (13, 1)] {
            let ints = [trips, split];
            let want = run(Backend::Interp, None, "loop_after_barrier", block, &ints);
            assert!(trips == 0 || want.iter().any(|v| *v != 0.0));
            for width in WIDTHS {
                let got = run(Backend::Cpu, width, "loop_after_barrier", block, &ints);
                assert_eq!(got, want, "block {block} {ints:?} width {width:?}");
            }
        }
    }
}

#[test]
fn loops_without_barriers_whose_warps_alternate_match_the_interpreter() {
    let name = "loop_in_general_function";
    for block in [64, 80] {
        for (trips, split, limit, stop) in [
            (9, 0, 128, -1),
            (9, 1, 128, -1),
            (9, 0, 50, -1),
            (9, 0, 128, 40),
            (0, 0, 128, -1),
        ] {
            let ints = [trips, split, limit, stop];
            let want = run(Backend::Interp, None, name, block, &ints);
            assert!(trips == 0 || want.iter().any(|v| *v != 0.0));
            for width in WIDTHS {
                let got = run(Backend::Cpu, width, name, block, &ints);
                assert_eq!(got, want, "block {block} {ints:?} width {width:?}");
            }
        }
    }
}

#[test]
fn barrier_free_loops_that_load_and_store_match_the_interpreter() {
    let name = "march_in_general_function";
    for block in [64, 80] {
        // (trips, limit, edge): every lane; lanes from 50 on exit (the
        // second warp is partial); lane 0, 31 or 5 of each warp on the
        // other side of the branch; no trip.
        for (trips, limit, edge) in [
            (9, 128, -1),
            (9, 50, -1),
            (9, 128, 0),
            (9, 128, 31),
            (9, 40, 5),
            (0, 128, -1),
        ] {
            let ints = [trips, limit, edge];
            let want = run(Backend::Interp, None, name, block, &ints);
            assert!(trips == 0 || want.iter().any(|v| *v != 0.0));
            for width in [Some(32), Some(16), Some(8)] {
                let got = run(Backend::Cpu, width, name, block, &ints);
                assert_eq!(got, want, "block {block} {ints:?} width {width:?}");
            }
        }
    }
}
