//! Rounds of a CTA unrolled over its warps (crates/cpu/src/emit.rs).
//!
//! Unrolled rounds carry a warp's registers from round to round in a
//! scratch copy and write them back to the warp state only where the
//! rounds stop (`ChainSlots`). `chain_pass` stops its rounds at different
//! barriers in different CTAs, with registers live across one barrier
//! and across all of them, and lanes that finish early; `chain_stop`
//! stops them with every warp at one barrier and a register the first
//! round wrote passing through. The compiled backend agrees with the
//! interpreter, also with `WARPFOLD_CHAIN=off`, where the rounds stop
//! after every round. Each set of copies (in, back at a barrier, back
//! otherwise, the first round's, the pass-through part) fails the test
//! when left out.
//!
//! A barrier-free kernel's one round is unrolled too
//! (`FreshRound::Unrolled`): `spin_sum` agrees with the interpreter
//! whether every warp finishes in it, some yield and finish through the
//! round loop (long loops), or the block leaves a partial warp (then the
//! round is not unrolled). With more warps than are unrolled, the round
//! runs in a loop of its own (`fresh_loop_blocks`), agreeing as well; in
//! `warp_spin` every other warp finishes in that round and the rest go
//! on through the round loop. Warps of 32, 16 and 8 lanes, one and two
//! workers.
//!
//! Every barrier of a block scan without bounds tests gets a region
//! function however small the general warp function is
//! (`REGION_BYTES_FLOOR`).

use warpfold::{Arg, Backend, Device};

const B: u32 = 128;

/// Kernel `name` of `kernels/unrolled_rounds.ptx` over `trips.len()`
/// CTAs of `block` threads reading `input`: the output, and on the
/// compiled backend the kernel's LLVM IR and warp width.
fn run(
    name: &str,
    (input, trips): (&[i32], &[i32]),
    block: u32,
    backend: Backend,
    (width, threads): (Option<u32>, usize),
) -> (Vec<i32>, Option<(String, u32)>) {
    let dev = Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_threads(threads)
        .with_disk_cache(None);
    let m = dev
        .load_ptx_named(
            include_str!("kernels/unrolled_rounds.ptx"),
            "unrolled_rounds.ptx",
        )
        .expect("loads");
    let k = m.kernel(name).unwrap();
    assert_eq!(k.effective_backend([block, 1, 1]).0, backend);
    let a = dev.buffer_from(input).unwrap();
    let n = dev.buffer_from(trips).unwrap();
    let out = dev.buffer_zeroed(input.len() * 4).unwrap();
    k.launch(
        [trips.len() as u32, 1, 1],
        [block, 1, 1],
        0,
        &[Arg::Buffer(&a), Arg::Buffer(&n), Arg::Buffer(&out)],
    )
    .unwrap();
    let ir = (backend == Backend::Cpu).then(|| {
        let c = k.compiled([block, 1, 1]);
        let c = c.as_ref().as_ref().unwrap();
        (c.llvm_ir.clone(), c.warp_lanes())
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
        let (want, _) = run(name, (&input, &trips), B, Backend::Interp, (None, 0));
        // 4 warps of 32 lanes and 8 of 16 are unrolled; 16 of 8 lanes are not.
        for (width, unrolled) in [(None, true), (Some(16), true), (Some(8), false)] {
            for threads in [1, 0] {
                let (got, ir) = run(name, (&input, &trips), B, Backend::Cpu, (width, threads));
                assert_eq!(got, want, "{name}: {width:?} lanes, {threads} threads");
                let (ir, _) = ir.unwrap();
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

#[test]
fn an_unrolled_first_round_agrees_with_the_interpreter() {
    // Short loops everywhere, then CTAs whose lanes loop up to 60000 times
    // (past the yield budget), then a mix.
    let cases: [&[i32]; 3] = [
        &[0, 1, 5, 9, 3, 2],
        &[60_000, 3, 40_000],
        &[7, 30_000, 0, 100],
    ];
    for (name, trips) in ["spin_sum", "warp_spin"]
        .into_iter()
        .flat_map(|name| cases.map(|trips| (name, trips)))
    {
        for block in [128u32, 256, 100, 512] {
            let n = trips.len() * block as usize;
            let input: Vec<i32> = (0..n as i32).map(|i| i * 7919 - 40_000).collect();
            let io = (&input[..], trips);
            let (want, _) = run(name, io, block, Backend::Interp, (None, 0));
            for width in [None, Some(16), Some(8)] {
                for threads in [1, 0] {
                    let (got, ir) = run(name, io, block, Backend::Cpu, (width, threads));
                    let what = format!(
                        "{name}: {trips:?}, {block} threads, {width:?} lanes, {threads} workers"
                    );
                    assert_eq!(got, want, "{what}");
                    let (ir, lanes) = ir.unwrap();
                    let whole = block % lanes == 0;
                    let unrolled = ir.contains("\nuf_in:");
                    if name == "spin_sum" {
                        assert_eq!(
                            unrolled,
                            whole && block / lanes <= 8,
                            "{what}: the first round unrolled"
                        );
                    }
                    assert_eq!(
                        ir.contains("\nfl_loop:"),
                        whole && !unrolled,
                        "{what}: the first round's own loop"
                    );
                }
            }
        }
    }
}

#[test]
fn every_barrier_of_a_block_scan_without_bounds_tests_has_a_region_function() {
    // 64 CTAs of 256 threads; 17 barriers (one before the steps, two in
    // each of 8). With a site left without a region function every round
    // went through the general code: 2.4x slower.
    let dev = |backend, width| {
        Device::new()
            .with_backend(backend)
            .with_warp_width(width)
            .with_disk_cache(None)
    };
    let input: Vec<f32> = (0..64 * 256)
        .map(|i| (i * 7919 % 2003) as f32 * 0.25)
        .collect();
    let scan = |dev: &Device| {
        let m = dev
            .load_ptx_named(
                include_str!("kernels/region_budget.ptx"),
                "region_budget.ptx",
            )
            .expect("loads");
        let k = m.kernel("scan_unguarded").unwrap();
        let a = dev.buffer_from(&input).unwrap();
        let out = dev.buffer_zeroed(input.len() * 4).unwrap();
        k.launch(
            [64, 1, 1],
            [256, 1, 1],
            0,
            &[Arg::Buffer(&a), Arg::Buffer(&out)],
        )
        .unwrap();
        let c = k.compiled([256, 1, 1]);
        let ir = c.as_ref().as_ref().ok().map(|c| c.llvm_ir.clone());
        (out.to_vec::<f32>().unwrap(), ir)
    };
    let (want, _) = scan(&dev(Backend::Interp, None));
    for width in [None, Some(16), Some(8)] {
        let (got, ir) = scan(&dev(Backend::Cpu, width));
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "{width:?} lanes"
        );
        let ir = ir.expect("compiled");
        let regions = ir.matches("define internal i32 @wf_region").count();
        assert_eq!(regions, 17, "{width:?} lanes: region functions");
    }
}
