//! Shared arrays written only at each thread's own slot, whose stores may
//! keep the CPU's NaNs (see `warpfold-cpu`'s `own_slots`): the compiled
//! backend must give the interpreter's bits exactly, canonical NaNs from
//! arithmetic and loaded NaNs untouched, in full and partial warps.

use warpfold::{Arg, Backend, Device};

/// Infinities of both signs next to each other (inf - inf and -inf + inf
/// make NaNs), quiet and signalling NaNs with payloads, and numbers.
fn input(n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| match i % 6 {
            0 => f32::INFINITY.to_bits(),
            1 => f32::NEG_INFINITY.to_bits(),
            2 => 0x7fc0_0123,
            3 => 0xffa0_0001,
            4 => (i as f32 * 0.5).to_bits(),
            _ => (-(i as f32)).to_bits(),
        })
        .collect()
}

/// `kernel` on `backend` over `blocks` blocks of `block` threads: the
/// output bits.
fn run(backend: Backend, kernel: &str, block: u32, blocks: u32) -> Vec<u32> {
    let dev = Device::new().with_backend(backend);
    let m = dev
        .load_ptx_named(include_str!("kernels/own_slots.ptx"), "own_slots.ptx")
        .expect("loads");
    let k = m.kernel(kernel).unwrap();
    let (used, why) = k.effective_backend([block, 1, 1]);
    assert_eq!(used, backend, "{kernel}: {why:?}");
    let n = (block * blocks) as usize;
    let inp = dev.buffer_from(&input(n)).unwrap();
    let out = dev.buffer_zeroed(n * 4).unwrap();
    k.launch(
        [blocks, 1, 1],
        [block, 1, 1],
        0,
        &[Arg::Buffer(&inp), Arg::Buffer(&out)],
    )
    .unwrap();
    out.to_vec().unwrap()
}

fn agree(kernel: &str) -> Vec<u32> {
    let mut first = None;
    for block in [256, 64, 40] {
        let cpu = run(Backend::Cpu, kernel, block, 3);
        let interp = run(Backend::Interp, kernel, block, 3);
        for (i, (c, r)) in cpu.iter().zip(&interp).enumerate() {
            assert_eq!(
                c, r,
                "{kernel}, blocks of {block}: element {i} is {c:#010x} on cpu, {r:#010x} on interp"
            );
        }
        first.get_or_insert(interp);
    }
    first.unwrap()
}

#[test]
fn sums_kept_in_own_slots_come_back_canonical() {
    let out = agree("scan2");
    // Each block's first thread sums inf alone; thread 1 inf + -inf.
    assert_eq!(out[0], f32::INFINITY.to_bits());
    assert_eq!(out[1], 0x7fff_ffff, "inf + -inf is the canonical NaN");
}

#[test]
fn loaded_bits_read_back_from_an_own_slot_stay_exact() {
    let out = agree("exact_or_sum");
    assert_eq!(
        out[2], 0x7fc0_0123,
        "an even thread's loaded NaN keeps its payload"
    );
    assert_eq!(
        out[3], 0x7fff_ffff,
        "an odd thread's NaN - NaN is canonical"
    );
}

#[test]
fn a_neighbour_slot_read_as_bits_holds_canonical_nans() {
    let out = agree("neg_neighbour");
    // Thread 1 negates thread 0's inf - inf.
    assert_eq!(out[1], 0xffff_ffff);
    let out = agree("copy_neighbour");
    assert_eq!(out[1], 0x7fff_ffff);
}

#[test]
fn a_guarded_store_of_loaded_bits_keeps_them() {
    let out = agree("guarded_back");
    assert_eq!(out[0], 0x7fff_ffff, "inf - inf");
    assert_eq!(out[3], 0xffa0_0001, "thread 3 put back its loaded NaN");
}

#[test]
fn a_tree_reductions_total_read_back_by_thread_0_is_canonical() {
    // Block 0's first 8 values hold inf and -inf: the total is a NaN.
    let out = agree("tree_sum");
    assert_eq!(out[0], 0x7fff_ffff);
    let out = agree("tree_sum_two");
    assert_eq!(&out[..2], &[0x7fff_ffff, 0x7fff_ffff]);
}

#[test]
fn another_threads_slot_read_by_name_keeps_its_exact_bits() {
    let out = agree("other_reads_slot");
    assert_eq!(
        out[1], 0x7fc0_0123,
        "thread 2's loaded NaN, copied by thread 1"
    );
}
