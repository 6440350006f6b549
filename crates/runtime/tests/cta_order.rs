//! Two-dimensional grids of tiled matrix products run y first on the
//! compiled backend (see the cpu crate's `cta_order`): every CTA must still
//! see its own `%ctaid` and compute its own tile, on one worker and on all
//! cores, for grids with a partial last tile in each direction.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/cta_order.ptx"), "cta_order.ptx")
        .expect("loads")
}

/// C (m x n) = A (m x k) * B (k x n) on `backend` with `threads` workers.
fn product(
    backend: Backend,
    threads: usize,
    kernel: &str,
    m: usize,
    n: usize,
    k: usize,
) -> Vec<f32> {
    let dev = Device::new().with_backend(backend).with_threads(threads);
    let md = module(&dev);
    let kern = md.kernel(kernel).unwrap();
    assert_eq!(kern.effective_backend([16, 16, 1]).1, None);
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 7919) % 1000) as f32 / 256.0 - 1.5)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 104_729) % 997) as f32 / 128.0 - 3.0)
        .collect();
    let (da, db) = (dev.buffer_from(&a).unwrap(), dev.buffer_from(&b).unwrap());
    let dc = dev.buffer_zeroed(m * n * 4).unwrap();
    let done = dev.buffer_zeroed(4).unwrap();
    let grid = [n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1];
    let mut args = vec![
        Arg::Buffer(&dc),
        Arg::Buffer(&da),
        Arg::Buffer(&db),
        Arg::I32(m as i32),
        Arg::I32(n as i32),
        Arg::I32(k as i32),
    ];
    if kernel == "tiled_matmul_counting" {
        args.push(Arg::Buffer(&done));
    }
    kern.launch(grid, [16, 16, 1], 0, &args)
        .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
    if kernel == "tiled_matmul_counting" {
        assert_eq!(done.to_vec::<i32>().unwrap(), [(grid[0] * grid[1]) as i32]);
    }
    dc.to_vec::<f32>().unwrap()
}

#[test]
fn tiles_of_a_grid_run_y_first_land_where_the_interpreter_puts_them() {
    for (m, n, k) in [(80, 48, 40), (37, 70, 19)] {
        for kernel in ["tiled_matmul", "tiled_matmul_counting"] {
            let want = product(Backend::Interp, 1, kernel, m, n, k);
            for threads in [1, 0] {
                let got = product(Backend::Cpu, threads, kernel, m, n, k);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{kernel} {m}x{n}x{k}, {threads} threads");
            }
        }
    }
}
