//! Loads whose warp holds several block rows that each read consecutive
//! elements, the rows a pitch apart known only at run time (a 16 x 16
//! tile of a matrix): the compiled backend reads each row with one load
//! when every lane runs and falls back to per-lane addresses otherwise.
//! Both backends must give the host's result for full and partial rows,
//! rows of 8 and 16 lanes and every warp width.

use warpfold::{Arg, Backend, Device};

const ROWS: usize = 37;

/// The backends and warp widths every test runs on.
const RUNS: [(Backend, Option<u32>); 4] = [
    (Backend::Cpu, None),
    (Backend::Cpu, Some(16)),
    (Backend::Cpu, Some(8)),
    (Backend::Interp, None),
];

/// A device for `backend` at `width` and its kernel `name` of
/// `kernels/row_loads.cu`, checked to run there for blocks of `block`.
fn row_kernel(
    backend: Backend,
    width: Option<u32>,
    name: &str,
    block: [u32; 3],
) -> (Device, warpfold::Kernel) {
    let dev = Device::new().with_backend(backend).with_warp_width(width);
    let m = dev
        .load_ptx_named(include_str!("kernels/row_loads.ptx"), "row_loads.ptx")
        .expect("loads");
    let k = m.kernel(name).unwrap();
    assert_eq!(k.effective_backend(block).0, backend, "{name} {block:?}");
    (dev, k)
}
/// Kernel `name(in, out, pitch, steps)` of `row_kernel` launched on
/// `grid` with input `a`: the output (a float a thread) and the kernel.
fn run_steps(
    (backend, width): (Backend, Option<u32>),
    name: &str,
    (grid, block): ([u32; 3], [u32; 3]),
    a: &[f32],
    (pitch, steps): (usize, usize),
) -> (Vec<f32>, warpfold::Kernel) {
    let (dev, k) = row_kernel(backend, width, name, block);
    let din = dev.buffer_from(a).unwrap();
    let threads: u32 = grid.iter().chain(&block).product();
    let out = dev.buffer_zeroed(threads as usize * 4).unwrap();
    k.launch(
        grid,
        block,
        0,
        &[
            Arg::Buffer(&din),
            Arg::Buffer(&out),
            Arg::I32(pitch as i32),
            Arg::I32(steps as i32),
        ],
    )
    .unwrap();
    (out.to_vec::<f32>().unwrap(), k)
}

const PITCH: usize = 200;

/// `out[r * cols + c] = a[r * PITCH + c] * 2 + 1` where in range.
fn expected(a: &[f32], cols: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; ROWS * cols];
    for r in 0..ROWS {
        for c in 0..cols {
            out[r * cols + c] = a[r * PITCH + c] * 2.0 + 1.0;
        }
    }
    out
}

#[test]
fn rows_a_runtime_pitch_apart_read_their_own_elements() {
    let a: Vec<f32> = (0..ROWS * PITCH)
        .map(|i| (i.wrapping_mul(2_654_435_761) % 1000) as f32 * 0.25)
        .collect();
    // Rows of 16 and 8 lanes; 48 and 64 columns fill every row, 40 and 45
    // leave the last block column's rows partial.
    for (block, cols) in [
        ([16u32, 16, 1], 64usize),
        ([16, 16, 1], 40),
        ([16, 4, 1], 45),
        ([8, 8, 1], 48),
        ([8, 16, 1], 45),
    ] {
        let want = expected(&a, cols);
        let grid = [
            (cols as u32).div_ceil(block[0]),
            (ROWS as u32).div_ceil(block[1]),
            1,
        ];
        for (backend, width) in RUNS {
            let (dev, k) = row_kernel(backend, width, "tile_rows", block);
            let din = dev.buffer_from(&a).unwrap();
            let out = dev.buffer_zeroed(ROWS * cols * 4).unwrap();
            k.launch(
                grid,
                block,
                0,
                &[
                    Arg::Buffer(&din),
                    Arg::Buffer(&out),
                    Arg::I32(PITCH as i32),
                    Arg::I32(ROWS as i32),
                    Arg::I32(cols as i32),
                ],
            )
            .unwrap();
            let got = out.to_vec::<f32>().unwrap();
            let what = format!("{backend:?} width {width:?}, block {block:?}, {cols} columns");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{what}: element {i}: {g} != {w}");
            }
        }
    }
}

#[test]
fn rows_whose_first_lanes_are_off_read_only_from_the_lanes_that_run() {
    let (rows, pitch) = (16usize, 200usize);
    let a: Vec<f32> = (0..rows * pitch).map(|i| i as f32).collect();
    for block in [[16u32, 16, 1], [8, 16, 1], [16, 8, 1]] {
        let (w, h) = (block[0] as usize, block[1] as usize);
        let want: Vec<f32> = (0..w * h)
            .map(|i| {
                let (ty, tx) = (i / w, i % w);
                if tx >= 4 {
                    a[ty * pitch + tx]
                } else {
                    -1.0
                }
            })
            .collect();
        for (backend, width) in RUNS {
            let (dev, k) = row_kernel(backend, width, "skip_first", block);
            let din = dev.buffer_from(&a).unwrap();
            let out = dev.buffer_from(&vec![-1.0f32; w * h]).unwrap();
            k.launch(
                [1, 1, 1],
                block,
                0,
                &[Arg::Buffer(&din), Arg::I32(pitch as i32), Arg::Buffer(&out)],
            )
            .unwrap();
            let got = out.to_vec::<f32>().unwrap();
            assert_eq!(got, want, "{backend:?} width {width:?}, block {block:?}");
        }
    }
}

#[test]
fn rows_read_through_a_pointer_stepped_round_a_loop() {
    let (rows, pitch, steps) = (32usize, 300usize, 12usize);
    let a: Vec<f32> = (0..rows * pitch)
        .map(|i| (i.wrapping_mul(40_503) % 977) as f32)
        .collect();
    for block in [[16u32, 16, 1], [16, 8, 1], [8, 8, 1]] {
        let w = block[0] as usize;
        let want: Vec<f32> = (0..rows * w)
            .map(|t| {
                let (r, c) = (t / w, t % w);
                (0..steps).fold(0.0f32, |s, i| s * 0.5 + a[r * pitch + c + 16 * i])
            })
            .collect();
        for (backend, width) in RUNS {
            let grid = [1, rows as u32 / block[1], 1];
            let (got, _) = run_steps(
                (backend, width),
                "row_steps",
                (grid, block),
                &a,
                (pitch, steps),
            );
            assert_eq!(got, want, "{backend:?} width {width:?}, block {block:?}");
        }
    }
}

#[test]
fn overlapping_rows_keep_the_later_lanes_values() {
    // One warp of 32 threads in rows of 16 or 8 (threads of different
    // warps writing one element would have no order).
    for (block, pitch) in [([16u32, 2, 1], 8usize), ([16, 2, 1], 12), ([8, 4, 1], 5)] {
        let (w, h) = (block[0] as usize, block[1] as usize);
        let len = (h - 1) * pitch + w;
        // Lane order: the last writer of each element by thread index.
        let mut want = vec![0.0f32; len];
        for t in 0..w * h {
            let (ty, tx) = (t / w, t % w);
            want[ty * pitch + tx] = tx as f32 + 100.0 * ty as f32;
        }
        for (backend, width) in RUNS {
            let (dev, k) = row_kernel(backend, width, "overlapping_rows", block);
            let out = dev.buffer_zeroed(len * 4).unwrap();
            k.launch(
                [1, 1, 1],
                block,
                0,
                &[Arg::Buffer(&out), Arg::I32(pitch as i32)],
            )
            .unwrap();
            let got = out.to_vec::<f32>().unwrap();
            assert_eq!(got, want, "{backend:?} width {width:?}, block {block:?}");
        }
    }
}

/// Runs kernel `name(input, out)` as one block of shape `block` on every
/// backend and width, `out` starting at -1 in every thread's element, and
/// checks it against `want(ty, tx)` for the threads running a lane (those
/// with `tx < (ty % 3) * 6`: none, some or all of a row's lanes).
fn rows_some_off(name: &str, block: [u32; 3], input: &[f32], want: impl Fn(usize, usize) -> f32) {
    let (w, h) = (block[0] as usize, block[1] as usize);
    let want: Vec<f32> = (0..w * h)
        .map(|i| {
            let (ty, tx) = (i / w, i % w);
            if tx < (ty % 3) * 6 {
                want(ty, tx)
            } else {
                -1.0
            }
        })
        .collect();
    for (backend, width) in RUNS {
        let (dev, k) = row_kernel(backend, width, name, block);
        let din = dev.buffer_from(input).unwrap();
        let out = dev.buffer_from(&vec![-1.0f32; w * h]).unwrap();
        k.launch([1, 1, 1], block, 0, &[Arg::Buffer(&din), Arg::Buffer(&out)])
            .unwrap();
        let got = out.to_vec::<f32>().unwrap();
        assert_eq!(got, want, "{backend:?} width {width:?}, block {block:?}");
    }
}

#[test]
fn rows_reading_one_element_each_with_some_rows_off() {
    let v: Vec<f32> = (0..16 * 7).map(|i| (i * i % 101) as f32 + 0.5).collect();
    for block in [[16u32, 8, 1], [8, 16, 1], [16, 4, 1]] {
        rows_some_off("row_values", block, &v, |ty, tx| v[ty * 7] + tx as f32);
    }
}

#[test]
fn shared_rows_with_some_rows_off_read_their_own_elements() {
    for block in [[16u32, 8, 1], [8, 16, 1], [16, 4, 1], [16, 16, 1]] {
        let w = block[0] as usize;
        let a: Vec<f32> = (0..w * block[1] as usize)
            .map(|i| (i * 37 % 101) as f32 + 0.25)
            .collect();
        rows_some_off("shared_rows", block, &a, |ty, tx| {
            a[ty * w + tx] * 3.0 + a[ty * w]
        });
    }
}

#[test]
fn rows_stepped_round_a_tile_loop_with_barriers_sum_their_own_tiles() {
    let (pitch, steps) = (300usize, 12usize);
    for block in [[16u32, 16, 1], [16, 3, 1], [8, 8, 1], [8, 4, 1]] {
        let (w, h) = (block[0] as usize, block[1] as usize);
        let rows = 4 * h;
        // Small integers: every product and sum below is exact.
        let a: Vec<f32> = (0..rows * pitch)
            .map(|i| (i.wrapping_mul(2_654_435_761) % 97) as f32)
            .collect();
        let want: Vec<f32> = (0..rows * w)
            .map(|t| {
                let r = t / w;
                let ty = r % h;
                let mut s = 0.0f32;
                for i in 0..steps {
                    for j in 0..w {
                        let idx = r * pitch + j + i * w;
                        let odd = if ty % 2 == 1 {
                            r * pitch + (w - 1 - j)
                        } else {
                            j
                        };
                        s += (a[idx] + 0.5 * a[odd + i]) * (j + 1) as f32;
                    }
                }
                s
            })
            .collect();
        for (backend, width) in RUNS {
            let before = warpfold_cpu::row_registers();
            let run = (backend, width);
            let (got, k) = run_steps(run, "tile_loop", ([1, 4, 1], block), &a, (pitch, steps));
            let what = format!("{backend:?} width {width:?}, block {block:?}");
            assert_eq!(got, want, "{what}");
            // 32-lane warps of these rows keep `idx` as one scalar a row
            // (`odd` stays a vector: only some rows write it again).
            let kept = warpfold_cpu::row_registers() - before;
            if k.warp_lanes_for(block, [1, 4, 1]) == Some(32) {
                assert!(kept > 0, "{what}: no register kept per row");
            }
        }
    }
}
