//! Unrolled rounds carry a warp's registers from round to round in a
//! scratch copy and write them back to the warp state only where the
//! rounds stop (`ChainSlots` in crates/cpu/src/emit.rs). `chain_pass`
//! stops its rounds at different barriers in different CTAs, with
//! registers live across one barrier and across all of them, and lanes
//! that finish early; `chain_stop` stops them with every warp at one
//! barrier and a register the first round wrote passing through. The
//! compiled backend agrees with the interpreter, also with
//! `WARPFOLD_CHAIN=off`, where the rounds stop after every round. Each
//! set of copies (in, back at a barrier, back otherwise, the first
//! round's, the pass-through part) fails the test when left out.

use warpfold::{Arg, Backend, Device};

const B: u32 = 128;

/// Kernel `name` over `trips.len()` CTAs: the output, and the compiled
/// kernel's LLVM IR on the compiled backend.
fn run(
    name: &str,
    input: &[i32],
    trips: &[i32],
    backend: Backend,
    (width, threads): (Option<u32>, usize),
) -> (Vec<i32>, Option<String>) {
    let dev = Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_threads(threads)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(
            include_str!("kernels/chain_scratch.ptx"),
            "chain_scratch.ptx",
        )
        .expect("loads");
    let k = m.kernel(name).unwrap();
    assert_eq!(k.effective_backend([B, 1, 1]).0, backend);
    let a = dev.buffer_from(input).unwrap();
    let n = dev.buffer_from(trips).unwrap();
    let out = dev.buffer_zeroed(input.len() * 4).unwrap();
    k.launch(
        [trips.len() as u32, 1, 1],
        [B, 1, 1],
        0,
        &[Arg::Buffer(&a), Arg::Buffer(&n), Arg::Buffer(&out)],
    )
    .unwrap();
    let ir = (backend == Backend::Cpu).then(|| {
        let c = k.compiled([B, 1, 1]);
        c.as_ref().as_ref().unwrap().llvm_ir.clone()
    });
    (out.to_vec::<i32>().unwrap(), ir)
}

#[test]
fn registers_carried_through_unrolled_rounds_reach_the_state_where_they_stop() {
    // Trip counts 0 to 5 (the loop's rounds are unrolled by four in the
    // PTX), odd ones finishing lanes 100-127 early.
    let trips: Vec<i32> = (0..18).map(|c| (c * 7 % 6) as i32).collect();
    let input: Vec<i32> = (0..trips.len() as i32 * B as i32)
        .map(|i| (i * 7919 % 2003) - 1000)
        .collect();
    for name in ["chain_pass", "chain_stop"] {
        let (want, _) = run(name, &input, &trips, Backend::Interp, (None, 0));
        // 4 warps of 32 lanes and 8 of 16 are unrolled; 16 of 8 lanes are not.
        for (width, unrolled) in [(None, true), (Some(16), true), (Some(8), false)] {
            for threads in [1, 0] {
                let (got, ir) = run(name, &input, &trips, Backend::Cpu, (width, threads));
                assert_eq!(got, want, "{name}: {width:?} lanes, {threads} threads");
                let ir = ir.unwrap();
                assert_eq!(
                    ir.contains("%scrp0 = getelementptr"),
                    unrolled,
                    "{name}: {width:?} lanes: scratch copies of the registers"
                );
            }
        }
    }
}

/// With `WARPFOLD_CHAIN=off` every unrolled round stops and writes back:
/// the test above again in a process of its own (compilation reads the
/// knob), where a missing write-back of what a round left at its barrier
/// shows.
#[test]
fn registers_reach_the_state_after_every_unrolled_round() {
    if std::env::var_os("WARPFOLD_CHAIN").is_some() {
        return;
    }
    let name = "registers_carried_through_unrolled_rounds_reach_the_state_where_they_stop";
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name])
        .env("WARPFOLD_CHAIN", "off")
        .env("WARPFOLD_CACHE_DIR", "off")
        .status()
        .unwrap();
    assert!(status.success(), "with WARPFOLD_CHAIN=off");
}
