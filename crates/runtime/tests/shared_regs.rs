//! A scan whose unrolled rounds keep its shared array in vector registers
//! (crates/cpu/src/shared_regs.rs; the pass's own test runs random access
//! sequences): the compiled backend agrees with the interpreter and with
//! the values computed here, bit for bit, and its code does keep shared
//! accesses in registers.

use warpfold::{Arg, Backend, Device};

const B: usize = 64;

#[test]
fn a_scan_kept_in_registers_matches_the_interpreter_and_the_host() {
    for ctas in [1usize, 3, 8] {
        let n = ctas * B;
        let input: Vec<f32> = (0..n)
            .map(|i| ((i * 37) % 101) as f32 * 0.125 - 3.0)
            .collect();
        let want = expected(&input);
        for backend in [Backend::Cpu, Backend::Interp] {
            let dev = Device::new().with_backend(backend).with_disk_cache(None);
            let before = warpfold_cpu::shared_accesses_in_registers();
            let m = dev
                .load_ptx_named(include_str!("kernels/shared_regs.ptx"), "shared_regs.ptx")
                .expect("loads");
            let k = m.kernel("scan_partial").unwrap();
            let (used, why) = k.effective_backend([B as u32, 1, 1]);
            assert_eq!(used, backend, "{why:?}");
            let out = dev.buffer_zeroed(n * 4).unwrap();
            let inp = dev.buffer_from(&input).unwrap();
            k.launch(
                [ctas as u32, 1, 1],
                [B as u32, 1, 1],
                0,
                &[Arg::Buffer(&inp), Arg::Buffer(&out)],
            )
            .unwrap();
            let got: Vec<f32> = out.to_vec().unwrap();
            assert_eq!(got, want, "{backend:?}, {ctas} CTAs");
            let kept = warpfold_cpu::shared_accesses_in_registers() - before;
            if backend == Backend::Cpu
                && ctas == 1
                && std::env::var_os("WARPFOLD_SHARED_REGS").is_none()
            {
                // Compiled once per device; the first launch compiles.
                assert!(kept > 0, "the scan's shared accesses stayed in memory");
            }
        }
    }
}

/// A tree sum (kernels/shared_regs.cu) whose CTAs end right after their
/// last read of shared memory: both backends give the host's sums, for
/// several CTAs one after the other on one worker and on all cores, and
/// the compiled code drops the partial sums the tree would write back.
#[test]
fn a_tree_sum_that_drops_its_last_writes_matches_the_interpreter_and_the_host() {
    const R: usize = 128;
    for ctas in [1usize, 5, 64] {
        let input: Vec<i32> = (0..ctas * R)
            .map(|i| (i as i32 * 7919) % 1013 - 500)
            .collect();
        let want: Vec<i32> = input.chunks(R).map(|c| c.iter().sum()).collect();
        for backend in [Backend::Cpu, Backend::Interp] {
            for threads in [1usize, 0] {
                let dev = Device::new()
                    .with_backend(backend)
                    .with_disk_cache(None)
                    .with_threads(threads);
                let before = warpfold_cpu::shared_writes_dropped();
                let m = dev
                    .load_ptx_named(include_str!("kernels/shared_regs.ptx"), "shared_regs.ptx")
                    .expect("loads");
                let k = m.kernel("tree_sum").unwrap();
                let (used, why) = k.effective_backend([R as u32, 1, 1]);
                assert_eq!(used, backend, "{why:?}");
                let out = dev.buffer_zeroed(ctas * 4).unwrap();
                let inp = dev.buffer_from(&input).unwrap();
                k.launch(
                    [ctas as u32, 1, 1],
                    [R as u32, 1, 1],
                    0,
                    &[Arg::Buffer(&inp), Arg::Buffer(&out)],
                )
                .unwrap();
                let got: Vec<i32> = out.to_vec().unwrap();
                assert_eq!(got, want, "{backend:?}, {ctas} CTAs, {threads} threads");
                let dropped = warpfold_cpu::shared_writes_dropped() - before;
                if backend == Backend::Cpu && std::env::var_os("WARPFOLD_SHARED_REGS").is_none() {
                    assert!(dropped > 0, "the tree's last writes were kept");
                }
            }
        }
    }
}

/// `scan_partial` (kernels/shared_regs.cu) computed here, in its order.
fn expected(input: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; input.len()];
    for (blk, x) in input.chunks(B).enumerate() {
        let mut s: Vec<f32> = vec![1.0, 2.0, 3.0];
        s.extend_from_slice(x);
        let mut d = 1;
        while d < B {
            let v: Vec<f32> = (0..B)
                .map(|t| if t >= d { s[t + 3 - d] } else { 0.0 })
                .collect();
            for t in 0..B {
                s[t + 3] += v[t];
            }
            d <<= 1;
        }
        for t in 0..B {
            out[blk * B + t] = s[t + 3] + s[t % 3];
        }
    }
    out
}
