//! Long loops whose CTAs' warps take turns trip by trip on the compiled
//! backend (a CTA barrier on the loop's way back, see the cpu crate's
//! `lockstep`): results stay bit for bit the interpreter's, with threads
//! that end before the loop (partial warps at the grid's edge, whole warps
//! past it), on one worker and on all cores, and the loop really is put in
//! step.
//!
//! Such kernels also run CTAs side by side along x as one wide CTA
//! (crates/cpu/src/merge.rs). Every thread still sees its own CTA's
//! `%ctaid.x`, `%tid.x`, `%ntid.x`, and the grid's `%nctaid.x`, and the
//! results are bit for bit the interpreter's: with a last wide CTA short
//! of real CTAs (grids of 3 and 5 CTAs along x), partial warps at the
//! grid's edge, one worker and all cores, 32, 16 and 8 lanes. Launches
//! with fewer than four wide CTAs per worker run the kernel compiled
//! unmerged.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/lockstep.ptx"), "lockstep.ptx")
        .expect("loads")
}

/// What a launch left: the output's bits, the count (`march_counting`),
/// the ids (`march_ids`) and, compiled, the CTAs merged into a wide one
/// and whether the launch ran the kernel unmerged instead.
struct Run {
    out: Vec<u32>,
    count: i32,
    ids: Vec<i32>,
    merged: Option<(u32, bool)>,
}

/// `kernel` over an nx x ny x nz grid in blocks of `block` on `backend`
/// with `threads` workers and warps of `width` lanes.
fn launch(
    backend: Backend,
    threads: usize,
    width: Option<u32>,
    kernel: &str,
    [nx, ny, nz]: [usize; 3],
    block: [u32; 3],
) -> Run {
    let dev = Device::new()
        .with_backend(backend)
        .with_threads(threads)
        .with_warp_width(width)
        .with_disk_cache(None);
    let md = module(&dev);
    let kern = md.kernel(kernel).unwrap();
    assert_eq!(kern.effective_backend(block).1, None, "{kernel} compiles");
    let n = nx * ny * nz;
    let input: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1013) as f32 / 64.0 - 7.0)
        .collect();
    let din = dev.buffer_from(&input).unwrap();
    let dout = dev.buffer_zeroed(n * 4).unwrap();
    let count = dev.buffer_zeroed(4).unwrap();
    let grid = [
        (nx as u32).div_ceil(block[0]),
        (ny as u32).div_ceil(block[1]),
        1,
    ];
    // Rows of 256 columns, for every thread of the grid's blocks.
    let ids = dev
        .buffer_from(&vec![-1i32; 5 * 256 * (grid[1] * block[1]) as usize])
        .unwrap();
    let mut args = vec![
        Arg::Buffer(&dout),
        Arg::Buffer(&din),
        Arg::I32(nx as i32),
        Arg::I32(ny as i32),
        Arg::I32(nz as i32),
        Arg::F32(0.125),
    ];
    match kernel {
        "march_counting" => args.push(Arg::Buffer(&count)),
        "march_ids" => args.push(Arg::Buffer(&ids)),
        _ => {}
    }
    kern.launch(grid, block, 0, &args)
        .unwrap_or_else(|e| panic!("{backend:?} {kernel}: {e}"));
    let merged = (backend == Backend::Cpu).then(|| {
        let c = kern.compiled(block);
        let c = c.as_ref().as_ref().expect("compiled");
        (c.ctas_merged(), c.ran_unmerged())
    });
    Run {
        out: dout.to_vec::<u32>().unwrap(),
        count: count.to_vec::<i32>().unwrap()[0],
        ids: ids.to_vec::<i32>().unwrap(),
        merged,
    }
}

/// `launch` with the automatic warp width.
fn run(backend: Backend, threads: usize, kernel: &str, size: [usize; 3], block: [u32; 3]) -> Run {
    launch(backend, threads, None, kernel, size, block)
}

#[test]
fn marches_in_step_match_the_interpreter() {
    // 70 x 50: partial warps in x and whole warps past the grid in y;
    // 64 x 16 fills every warp; nz = 3 leaves one interior plane.
    for size in [[70, 50, 9], [64, 16, 21], [40, 9, 3]] {
        for block in [[32, 8, 1], [64, 4, 1], [16, 16, 1]] {
            let want = run(Backend::Interp, 1, "march", size, block);
            for threads in [1, 0] {
                let before = warpfold_cpu::loops_in_step();
                let got = run(Backend::Cpu, threads, "march", size, block);
                assert!(
                    got.out == want.out,
                    "{size:?} in {block:?}, {threads} threads"
                );
                if std::env::var_os("WARPFOLD_LOCKSTEP").is_none() {
                    assert!(
                        warpfold_cpu::loops_in_step() > before,
                        "march is put in step"
                    );
                }
            }
        }
    }
}

#[test]
fn kernels_left_alone_still_match() {
    // `march_odd_columns` marches inside a branch half of each warp skips.
    for kernel in [
        "march_own_depth",
        "march_counting",
        "march_light",
        "march_odd_columns",
    ] {
        let size = [70, 50, 9];
        let want = run(Backend::Interp, 1, kernel, size, [32, 8, 1]);
        for threads in [1, 0] {
            let before = warpfold_cpu::loops_in_step();
            let got = run(Backend::Cpu, threads, kernel, size, [32, 8, 1]);
            assert!(got.out == want.out, "{kernel}, {threads} threads");
            assert_eq!(got.count, want.count, "{kernel} count");
            assert_eq!(
                warpfold_cpu::loops_in_step(),
                before,
                "{kernel} stays as it is"
            );
        }
    }
}

#[test]
fn merged_ctas_see_their_own_ids_and_match_the_interpreter() {
    let check_merge = std::env::var_os("WARPFOLD_MERGE").is_none()
        && std::env::var_os("WARPFOLD_LOCKSTEP").is_none();
    // Every launch has at least 8 wide CTAs: enough for two workers.
    for size in [[70, 70, 5], [160, 40, 5], [128, 64, 4]] {
        for block in [[32, 8, 1], [64, 4, 1], [32, 4, 1]] {
            let want = run(Backend::Interp, 1, "march_ids", size, block);
            // Threads of the grid's blocks wrote their ids, and no others.
            let written = want.ids.iter().filter(|&&v| v != -1).count();
            let threads_in_grid = (size[0] as u32).div_ceil(block[0])
                * block[0]
                * (size[1] as u32).div_ceil(block[1])
                * block[1];
            assert_eq!(written, 5 * threads_in_grid as usize, "{size:?} {block:?}");
            for (threads, width) in [(1, None), (0, None), (0, Some(16)), (1, Some(8))] {
                let got = launch(Backend::Cpu, threads, width, "march_ids", size, block);
                let what = format!("{size:?} in {block:?}, {threads} threads, {width:?} lanes");
                assert!(got.out == want.out, "{what}: output");
                if let Some(i) = (0..want.ids.len()).find(|&i| got.ids[i] != want.ids[i]) {
                    panic!(
                        "{what}: thread {} id {}: {} (want {})",
                        i / 5,
                        i % 5,
                        got.ids[i],
                        want.ids[i]
                    );
                }
                if check_merge {
                    let workers = if threads == 0 {
                        warpfold::cores()
                    } else {
                        threads
                    };
                    let wide = (size[0] as u32).div_ceil(4 * block[0])
                        * (size[1] as u32).div_ceil(block[1]);
                    let fell_back = (wide as usize) < 4 * workers;
                    assert_eq!(got.merged, Some((4, fell_back)), "{what}: merged");
                }
            }
        }
    }
}

#[test]
fn grids_of_few_wide_ctas_run_unmerged() {
    // Two CTAs along x, one along y: one wide CTA would leave a worker
    // idle, so the launch runs the kernel compiled unmerged.
    let size = [64, 8, 5];
    let want = run(Backend::Interp, 1, "march_ids", size, [32, 8, 1]);
    for threads in [1, 0] {
        let got = run(Backend::Cpu, threads, "march_ids", size, [32, 8, 1]);
        assert!(
            got.out == want.out && got.ids == want.ids,
            "{threads} threads"
        );
        if std::env::var_os("WARPFOLD_MERGE").is_none()
            && std::env::var_os("WARPFOLD_LOCKSTEP").is_none()
        {
            assert_eq!(got.merged, Some((4, true)));
        }
    }
}

#[test]
fn kernels_without_a_march_in_step_stay_one_cta() {
    // One load a trip: its loop is not put in step, so merging would
    // change nothing.
    let size = [70, 50, 9];
    let want = run(Backend::Interp, 1, "march_light", size, [32, 8, 1]);
    let got = run(Backend::Cpu, 0, "march_light", size, [32, 8, 1]);
    assert!(got.out == want.out);
    assert_eq!(got.merged, Some((1, false)));
}
