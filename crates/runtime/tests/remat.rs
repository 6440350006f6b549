//! Registers set after an early return and computed again when a warp
//! resumes after a barrier, instead of being kept in its state (see the cpu
//! crate's `uniform::rematerialisable`): compiled code must give what the
//! interpreter gives, bit for bit, for blocks of one and two warps whose
//! lanes return early in part, all or none, at every warp width.

mod common;
use common::{checked_kernel, device, words, BACKENDS};
use warpfold::{Arg, Backend};

const PTX: &str = include_str!("kernels/remat.ptx");

/// `kernel` on `backend` for one CTA of `threads` threads with `n`: the
/// output's words (starting as `init`).
fn run(backend: Backend, width: Option<u32>, kernel: &str, threads: u32, n: i32) -> Vec<u32> {
    let dev = device(backend, width);
    let k = checked_kernel(&dev, PTX, kernel, [threads, 1, 1]);
    let out = dev.buffer_from(&init()).unwrap();
    k.launch([1, 1, 1], [threads, 1, 1], 0, &[Arg::Buffer(&out), Arg::I32(n)])
        .unwrap();
    words(&out.to_bytes())
}

/// 128 words: values below and above 1.0, NaNs with payloads, infinities.
fn init() -> Vec<u32> {
    (0..128u32)
        .map(|i| match i % 6 {
            0 => 0x7fc0_0000 | i,
            1 => 0xff80_0001 + i,
            2 => f32::INFINITY.to_bits(),
            3 => (0.25 * i as f32).to_bits(),
            4 => (-(i as f32)).to_bits(),
            _ => (3.0 + i as f32).to_bits(),
        })
        .collect()
}

#[test]
fn recomputed_registers_hold_what_the_interpreter_gives() {
    for kernel in ["after_return", "not_before_reads"] {
        for threads in [32, 64] {
            for n in [0, 5, 16, 32, 40, 64] {
                let want = run(Backend::Interp, None, kernel, threads, n);
                for (backend, width) in &BACKENDS[1..] {
                    let got = run(*backend, *width, kernel, threads, n);
                    assert_eq!(got, want, "{kernel}, {threads} threads, n = {n}, {width:?} lanes");
                }
            }
        }
    }
}
