//! Warps yield (return to the driver, their state saved) after many
//! dispatcher visits or loop trips, so that warps waiting on each other
//! through memory all progress. A yield may land anywhere in a loop: with
//! tiny budgets (`WARPFOLD_YIELD_BUDGET`) every point of a divergent loop
//! gets one, and the compiled backend must still agree with the
//! interpreter and with the values computed here.

use warpfold::{Arg, Backend, Device};

const BUDGETS: std::ops::RangeInclusive<u32> = 2..=9;

#[test]
fn yields_anywhere_in_a_divergent_loop_keep_every_lanes_values() {
    if std::env::var_os("WARPFOLD_YIELD_BUDGET").is_none() {
        for budget in BUDGETS {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "yields_anywhere_in_a_divergent_loop_keep_every_lanes_values",
                ])
                .env("WARPFOLD_YIELD_BUDGET", budget.to_string())
                .env("WARPFOLD_CACHE_DIR", "off")
                .status()
                .unwrap();
            assert!(status.success(), "with WARPFOLD_YIELD_BUDGET={budget}");
        }
    }
    for threads in [32u32, 64] {
        for n in [1u32, 4, 7, 16, 33] {
            let len = (n * 64 + 128) as usize;
            let input: Vec<f32> = (0..len).map(|i| ((i * 37) % 101) as f32 * 0.25).collect();
            let want = expected(&input, n, threads);
            for backend in [Backend::Cpu, Backend::Interp] {
                let dev = Device::new().with_backend(backend);
                let m = dev
                    .load_ptx_named(include_str!("kernels/yields.ptx"), "yields.ptx")
                    .expect("loads");
                let k = m.kernel("edge_loop").unwrap();
                let (used, why) = k.effective_backend([threads, 1, 1]);
                assert_eq!(used, backend, "{why:?}");
                let out = dev.buffer_zeroed(len * 4).unwrap();
                let inp = dev.buffer_from(&input).unwrap();
                k.launch(
                    [1, 1, 1],
                    [threads, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::Buffer(&inp), Arg::U32(n)],
                )
                .unwrap();
                let got: Vec<f32> = out.to_vec().unwrap();
                assert_eq!(got, want, "{backend:?}, {threads} threads, n = {n}");
            }
        }
    }
}

/// `edge_loop` (see kernels/yields.cu) computed here, in its order.
fn expected(input: &[f32], n: u32, threads: u32) -> Vec<f32> {
    let mut out = vec![0.0f32; input.len()];
    for x in 0..threads as usize {
        let edge = x == 0 || x == 31;
        let mut acc = 0.0f32;
        for z in 0..n as usize {
            let i = z * 64 + x;
            let mut c = input[i];
            if !edge {
                c = c + input[i + 1] + input[i - 1];
            }
            out[i] = c;
            acc += c;
        }
        out[x] += acc;
    }
    out
}
