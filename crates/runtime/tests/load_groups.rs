//! Load groups: each lane reads the 16 consecutive words of its own row.
//! The compiled backend reads a warp's rows as vectors and transposes
//! them into one vector per column; where lanes are off (the last warp of
//! a grid, threads past the end), their rows come from a scratch row.
//! Every lane that runs must get its own row, for grids that end anywhere
//! in a warp and at every warp width.

mod common;
use common::{intel_host, knob_or_run_again};
use warpfold::{Arg, Backend, Device};

#[test]
fn partial_warps_read_each_running_lanes_own_row() {
    for n in [1usize, 17, 31, 32, 33, 40, 64, 95] {
        // Exactly n rows: any row read past them is outside the buffer.
        let a: Vec<i32> = (0..n * 16)
            .map(|i| (i as i32).wrapping_mul(7919) % 1000 - 500)
            .collect();
        let want: Vec<i32> = (0..n)
            .map(|g| (0..16).map(|j| a[g * 16 + j] * (j as i32 + 1)).sum())
            .collect();
        for (backend, width) in [
            (Backend::Cpu, None),
            (Backend::Cpu, Some(16)),
            (Backend::Cpu, Some(8)),
            (Backend::Interp, None),
        ] {
            for block in [32u32, 48, 64] {
                let dev = Device::new().with_backend(backend).with_warp_width(width);
                let m = dev
                    .load_ptx_named(include_str!("kernels/load_groups.ptx"), "load_groups.ptx")
                    .expect("loads");
                let k = m.kernel("row_sums").unwrap();
                let buf = dev.buffer_from(&a).unwrap();
                let out = dev.buffer_zeroed(n * 4).unwrap();
                let grid = (n as u32).div_ceil(block);
                k.launch(
                    [grid, 1, 1],
                    [block, 1, 1],
                    0,
                    &[Arg::Buffer(&buf), Arg::Buffer(&out), Arg::I32(n as i32)],
                )
                .unwrap();
                assert_eq!(
                    out.to_vec::<i32>().unwrap(),
                    want,
                    "{backend:?} width {width:?}, n = {n}, blocks of {block}"
                );
            }
        }
    }
}

/// A load group prefetches the rows the warp four warps on will read: by
/// default on Intel CPUs only, anywhere with `WARPFOLD_PREFETCH=groups`,
/// never with `off` (see the cpu crate's `lower::prefetch_groups_ahead`).
/// Compilation reads the knob, so the test runs again in processes of
/// their own that have it.
#[test]
fn load_groups_prefetch_ahead_on_intel_cpus_only() {
    let knob = knob_or_run_again(
        "load_groups_prefetch_ahead_on_intel_cpus_only",
        "WARPFOLD_PREFETCH",
        &["groups", "off"],
    );
    let want = match knob.as_deref() {
        Some("groups") => true,
        Some("off") => false,
        _ => intel_host(),
    };
    let dev = Device::new().with_backend(Backend::Cpu).with_disk_cache(None);
    let m = dev
        .load_ptx_named(include_str!("kernels/load_groups.ptx"), "load_groups.ptx")
        .expect("loads");
    let k = m.kernel("row_sums").unwrap();
    let c = k.compiled([64, 1, 1]);
    let ir = &c.as_ref().as_ref().expect("compiled").llvm_ir;
    assert_eq!(ir.contains("; pf_group"), want, "{knob:?}: prefetch emitted");
}
