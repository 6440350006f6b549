//! Long loops whose CTAs' warps take turns trip by trip on the compiled
//! backend (a CTA barrier on the loop's way back, see the cpu crate's
//! `lockstep`): results stay bit for bit the interpreter's, with threads
//! that end before the loop (partial warps at the grid's edge, whole warps
//! past it), on one worker and on all cores, and the loop really is put in
//! step.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/lockstep.ptx"), "lockstep.ptx")
        .expect("loads")
}

/// `kernel` over an nx x ny x nz grid in blocks of `block` on `backend`
/// with `threads` workers: the output and the count (`march_counting`).
fn run(
    backend: Backend,
    threads: usize,
    kernel: &str,
    [nx, ny, nz]: [usize; 3],
    block: [u32; 3],
) -> (Vec<f32>, i32) {
    let dev = Device::new()
        .with_backend(backend)
        .with_threads(threads)
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
    let mut args = vec![
        Arg::Buffer(&dout),
        Arg::Buffer(&din),
        Arg::I32(nx as i32),
        Arg::I32(ny as i32),
        Arg::I32(nz as i32),
        Arg::F32(0.125),
    ];
    if kernel == "march_counting" {
        args.push(Arg::Buffer(&count));
    }
    kern.launch(grid, block, 0, &args)
        .unwrap_or_else(|e| panic!("{backend:?} {kernel}: {e}"));
    (dout.to_vec().unwrap(), count.to_vec::<i32>().unwrap()[0])
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
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
                    same_bits(&got.0, &want.0),
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
            assert!(same_bits(&got.0, &want.0), "{kernel}, {threads} threads");
            assert_eq!(got.1, want.1, "{kernel} count");
            assert_eq!(
                warpfold_cpu::loops_in_step(),
                before,
                "{kernel} stays as it is"
            );
        }
    }
}
