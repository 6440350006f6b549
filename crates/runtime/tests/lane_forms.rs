//! Registers the compiled backend keeps as one scalar per warp (uniform
//! or affine across lanes, see `warpfold-cpu`'s `lanes`): edge cases run
//! on both backends, which must agree, and against values computed here.

mod common;
use common::{intel_host, knob_or_run_again};
use warpfold::{Arg, Backend, Buffer, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/lane_forms.ptx"), "lane_forms.ptx")
        .expect("loads")
}

fn devices() -> [(Backend, Device); 2] {
    [Backend::Cpu, Backend::Interp].map(|b| (b, Device::new().with_backend(b)))
}

/// The kernel, checked to run on `backend` (no silent fallback).
fn kernel(m: &Module, name: &str, backend: Backend, block: [u32; 3]) -> warpfold::Kernel {
    let k = m.kernel(name).unwrap();
    let (used, why) = k.effective_backend(block);
    assert_eq!(used, backend, "{name}: {why:?}");
    k
}

fn u64s(b: &Buffer) -> Vec<u64> {
    b.to_vec().unwrap()
}

fn u32s(b: &Buffer) -> Vec<u32> {
    b.to_vec().unwrap()
}

fn widened<T: Into<u64>>(v: Vec<T>) -> Vec<u64> {
    v.into_iter().map(Into::into).collect()
}

/// `f(ty, tx)` for each thread of a block of `block` threads, in order.
fn per_thread<T>(block: [u32; 3], f: impl Fn(u32, u32) -> T) -> Vec<T> {
    let (w, h) = (block[0], block[1]);
    (0..w * h).map(|t| f(t / w, t % w)).collect()
}

/// Kernel `name` run as one block of `block` threads at 32 lanes on
/// `dev` (of `backend`), with a zeroed word a thread, then `input` as a
/// buffer if any, then `words`: the output.
fn one_block(
    (backend, dev): (Backend, Device),
    name: &str,
    block: [u32; 3],
    input: Option<&[f32]>,
    words: &[u32],
) -> Buffer {
    let dev = dev.with_warp_width(Some(32));
    let m = module(&dev);
    let out = dev
        .buffer_zeroed(block.iter().product::<u32>() as usize * 4)
        .unwrap();
    let inp = input.map(|x| dev.buffer_from(x).unwrap());
    let args: Vec<Arg> = std::iter::once(Arg::Buffer(&out))
        .chain(inp.as_ref().map(Arg::Buffer))
        .chain(words.iter().map(|w| Arg::U32(*w)))
        .collect();
    kernel(&m, name, backend, block)
        .launch([1, 1, 1], block, 0, &args)
        .unwrap();
    out
}

#[test]
fn widening_is_exact_where_lanes_straddle_2_pow_31_and_2_pow_32() {
    let n = 128u32;
    // 0x7fff_fff0 straddles 2^31 at lane 16 of a 32-lane warp: 16- and
    // 8-lane warps each stay on one side; 0x7fff_fff8 at lane 8.
    let bases = [0x7fff_fff0u32, 0xffff_fff0, 0x7fff_ffe1, 0x7fff_fff8, 5];
    for (base, width) in bases.into_iter().flat_map(|b| [8, 16, 32].map(|w| (b, w))) {
        for (backend, dev) in devices() {
            let dev = dev.with_warp_width(Some(width));
            let m = module(&dev);
            let (s, z) = (
                dev.buffer_zeroed(n as usize * 8).unwrap(),
                dev.buffer_zeroed(n as usize * 8).unwrap(),
            );
            kernel(&m, "widen", backend, [n / 2, 1, 1])
                .launch(
                    [2, 1, 1],
                    [n / 2, 1, 1],
                    0,
                    &[Arg::Buffer(&s), Arg::Buffer(&z), Arg::U32(base)],
                )
                .unwrap();
            let want_s: Vec<u64> = (0..n)
                .map(|i| i64::from(i.wrapping_add(base) as i32) as u64)
                .collect();
            let want_z: Vec<u64> = (0..n).map(|i| u64::from(i.wrapping_add(base))).collect();
            let at = format!("{backend:?} base {base:#x}, {width} lanes");
            assert_eq!(u64s(&s), want_s, "{at} (sign)");
            assert_eq!(u64s(&z), want_z, "{at} (zero)");
        }
    }
}

#[test]
fn widening_is_exact_for_warps_narrower_than_the_straddle() {
    let n = 64u32;
    for width in [8, 16, 32] {
        for (backend, dev) in devices() {
            let dev = dev.with_warp_width(Some(width));
            let m = module(&dev);
            let (s, z) = (
                dev.buffer_zeroed(n as usize * 8).unwrap(),
                dev.buffer_zeroed(n as usize * 8).unwrap(),
            );
            kernel(&m, "widen_const", backend, [n, 1, 1])
                .launch([1, 1, 1], [n, 1, 1], 0, &[Arg::Buffer(&s), Arg::Buffer(&z)])
                .unwrap();
            let want_s: Vec<u64> = (0..n)
                .map(|i| i64::from(i.wrapping_add(0x7fff_fff0) as i32) as u64)
                .collect();
            let want_z: Vec<u64> = (0..n)
                .map(|i| u64::from(i.wrapping_add(0xffff_fff0)))
                .collect();
            assert_eq!(u64s(&s), want_s, "{backend:?}, {width} lanes (sign)");
            assert_eq!(u64s(&z), want_z, "{backend:?}, {width} lanes (zero)");
        }
    }
}

#[test]
fn a_register_only_some_block_rows_write_again_keeps_each_rows_value() {
    let pitch = 40u32;
    let input: Vec<f32> = (0..8 * pitch).map(|i| i as f32).collect();
    for block in [[16u32, 4, 1], [8, 8, 1], [16, 2, 1]] {
        let want: Vec<f32> = per_thread(block, |ty, tx| {
            input[(if ty % 2 == 1 { ty * pitch + tx } else { tx }) as usize]
        });
        for run in devices() {
            let backend = run.0;
            let out = one_block(run, "rows_apart", block, Some(&input), &[pitch]);
            assert_eq!(
                out.to_vec::<f32>().unwrap(),
                want,
                "{backend:?}, block {block:?}"
            );
        }
    }
}

/// Runs `stepped`-style kernel `name(out, in, k, trips)` as one block of
/// 64 threads over the words 0, 1, 2, ... at every warp width on both
/// backends; checks `out` (two words a thread) against `want` and that
/// the compiled backend rewrote a stepped pointer, or did not.
fn run_stepped(name: &str, k: u32, trips: u32, want: &[u32], rewritten: bool) {
    let input: Vec<f32> = (0..256).map(|i| i as f32).collect();
    for width in [8, 16, 32] {
        for (backend, dev) in devices() {
            let dev = dev.with_warp_width(Some(width));
            let m = module(&dev);
            let out = dev.buffer_zeroed(want.len() * 4).unwrap();
            let inp = dev.buffer_from(&input).unwrap();
            let before = warpfold_cpu::stepped_pointers();
            let args = [
                Arg::Buffer(&out),
                Arg::Buffer(&inp),
                Arg::U32(k),
                Arg::U32(trips),
            ];
            kernel(&m, name, backend, [64, 1, 1])
                .launch([1, 1, 1], [64, 1, 1], 0, &args)
                .unwrap();
            let what = format!("{name}: {backend:?}, {width} lanes, k {k}, {trips} trips");
            assert_eq!(u32s(&out), want, "{what}");
            let did = warpfold_cpu::stepped_pointers() > before;
            if backend == Backend::Cpu {
                assert_eq!(did, rewritten, "{what}: rewritten");
            }
        }
    }
}

#[test]
fn a_pointer_stepped_round_a_loop_reads_where_it_points() {
    let word = |i: i64| i as f32;
    for (k, trips) in [(7u32, 5u32), (1, 0), (3, 2)] {
        let want: Vec<u32> = (0..64)
            .flat_map(|t| {
                let p0 = 64 + t - 8;
                let mut s = 0.0f32;
                for j in 0..i64::from(trips) {
                    s += word(p0 + j * i64::from(k));
                    s += word(p0 + j * i64::from(k) + 1);
                }
                let end = p0 + i64::from(trips * k);
                s += word(end);
                s += word(end - 3);
                [s.to_bits(), ((end - 3 - 64) * 4) as u32]
            })
            .collect();
        run_stepped("stepped", k, trips, &want, true);
    }
}

#[test]
fn a_pointer_whose_start_index_changes_in_its_loop_stays_as_it_is() {
    let (k, trips) = (5u32, 4u32);
    let want: Vec<u32> = (0..64)
        .flat_map(|t| {
            let p0 = 64 + t - 8;
            let (mut s, mut i) = (0.0f32, t as i32 - 8);
            for j in 0..i64::from(trips) {
                s += (p0 + j * i64::from(k)) as f32;
                i += 1;
                s += i as f32;
            }
            let end = p0 + i64::from(trips * k);
            s += end as f32;
            [s.to_bits(), ((end - 64) * 4) as u32]
        })
        .collect();
    run_stepped("stepped_moving_index", k, trips, &want, false);
}

#[test]
fn a_uniform_quotient_that_lane_0_does_not_compute_is_the_quotient() {
    for width in [8, 16, 32] {
        for (backend, dev) in devices() {
            let dev = dev.with_warp_width(Some(width));
            let m = module(&dev);
            let out = dev.buffer_zeroed(64 * 4).unwrap();
            kernel(&m, "quotient_without_lane_0", backend, [64, 1, 1])
                .launch(
                    [1, 1, 1],
                    [64, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::U32(100), Arg::U32(7)],
                )
                .unwrap();
            let want: Vec<u32> = (0..64).map(|t| if t == 0 { 0 } else { 14 }).collect();
            assert_eq!(u32s(&out), want, "{backend:?}, {width} lanes");
        }
    }
}

#[test]
fn row_values_that_column_0_does_not_compute_are_each_rows() {
    let (pitch, d) = (9u32, 4u32);
    for block in [[16u32, 4, 1], [8, 8, 1]] {
        let want: Vec<u32> = per_thread(block, |ty, tx| {
            if tx == 0 {
                0
            } else {
                let v = ty * pitch;
                v / d + if v < 50 { 1000 } else { 2000 }
            }
        });
        for run in devices() {
            let backend = run.0;
            let out = one_block(run, "row_values_without_column_0", block, None, &[pitch, d]);
            assert_eq!(u32s(&out), want, "{backend:?}, block {block:?}");
        }
    }
}

#[test]
fn row_pointers_kept_across_a_barrier_read_their_rows() {
    let pitch = 37u32;
    let input: Vec<f32> = (0..16 * pitch).map(|i| i as f32).collect();
    for block in [[8u32, 8, 1], [16, 4, 1], [8, 16, 1]] {
        let want: Vec<f32> = per_thread(block, |ty, tx| {
            input[(ty * pitch + tx) as usize] + input[(ty * pitch) as usize]
        });
        for run in devices() {
            let backend = run.0;
            let before = warpfold_cpu::row_registers();
            let name = "row_pointer_across_a_barrier";
            let out = one_block(run, name, block, Some(&input), &[pitch]);
            let what = format!("{backend:?}, block {block:?}");
            assert_eq!(out.to_vec::<f32>().unwrap(), want, "{what}");
            if backend == Backend::Cpu {
                assert!(
                    warpfold_cpu::row_registers() > before,
                    "{what}: nothing kept per row"
                );
            }
        }
    }
}

#[test]
fn a_pointer_started_from_a_stepped_pointer_starts_where_that_one_ended() {
    let input: Vec<f32> = (0..512).map(|i| i as f32).collect();
    let (n, k, trips) = (64u32, 5u32, 3u32);
    let want: Vec<f32> = (0..n)
        .map(|t| {
            let mut s = 0.0f32;
            for j in 0..trips {
                s += input[(k + j) as usize];
            }
            for j in 0..trips {
                s += input[(k + trips + t + 32 * j) as usize];
            }
            s
        })
        .collect();
    for width in [8, 16, 32] {
        for (backend, dev) in devices() {
            let dev = dev.with_warp_width(Some(width));
            let m = module(&dev);
            let out = dev.buffer_zeroed(n as usize * 4).unwrap();
            let inp = dev.buffer_from(&input).unwrap();
            kernel(&m, "pointer_from_a_stepped_pointer", backend, [n, 1, 1])
                .launch(
                    [1, 1, 1],
                    [n, 1, 1],
                    0,
                    &[
                        Arg::Buffer(&out),
                        Arg::Buffer(&inp),
                        Arg::U32(k),
                        Arg::U32(trips),
                    ],
                )
                .unwrap();
            assert_eq!(
                out.to_vec::<f32>().unwrap(),
                want,
                "{backend:?}, {width} lanes"
            );
        }
    }
}

#[test]
fn indices_agree_in_every_block_shape() {
    let (w, h) = (100u32, 24u32);
    let input: Vec<u32> = (0..w * h).map(|i| i.wrapping_mul(2654435761)).collect();
    for block in [
        [32, 4, 1],
        [16, 4, 1],
        [48, 2, 1],
        [64, 1, 1],
        [7, 3, 1],
        [32, 2, 2],
    ] {
        let grid = [w.div_ceil(block[0]), h.div_ceil(block[1] * block[2]), 1];
        let mut outs = Vec::new();
        for (backend, dev) in devices() {
            let m = module(&dev);
            let out = dev.buffer_zeroed((w * h) as usize * 4).unwrap();
            let inp = dev.buffer_from(&input).unwrap();
            kernel(&m, "shapes", backend, block)
                .launch(
                    grid,
                    block,
                    0,
                    &[
                        Arg::Buffer(&out),
                        Arg::Buffer(&inp),
                        Arg::U32(w),
                        Arg::U32(h),
                    ],
                )
                .unwrap();
            outs.push(u32s(&out));
        }
        assert_eq!(outs[0], outs[1], "block {block:?}");
        // Spot checks that do not trust either backend: (0,0), and the
        // last column of the first row.
        assert_eq!(outs[0][0], input[0]);
        let lane = (w - 1) % block[0] % 32;
        if block[0] % 32 == 0 {
            assert_eq!(outs[0][(w - 1) as usize], input[(w - 1) as usize] + lane);
        }
    }
}

#[test]
fn affine_values_from_divergent_paths_and_guarded_loads() {
    for threads in [40u32, 64, 96, 128] {
        let mut outs = Vec::new();
        for (backend, dev) in devices() {
            let m = module(&dev);
            let out = dev.buffer_zeroed(threads as usize * 4).unwrap();
            // A buffer the guarded-off load would read out of bounds of.
            let bad = dev.buffer_zeroed(4).unwrap();
            kernel(&m, "diverge", backend, [threads, 1, 1])
                .launch(
                    [1, 1, 1],
                    [threads, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::Buffer(&bad), Arg::U32(13)],
                )
                .unwrap();
            outs.push(u32s(&out));
        }
        assert_eq!(outs[0], outs[1], "{threads} threads");
        // Lane t reads what lane t^1 stored, plus 7, plus sh[2] = 102.
        let stored = |t: u32| if t < 13 { t + 100 } else { 3 * t };
        let want: Vec<u32> = (0..threads).map(|t| stored(t ^ 1) + 7 + 102).collect();
        assert_eq!(outs[0], want, "{threads} threads");
    }
}

#[test]
fn a_definition_that_does_not_dominate_a_use_keeps_other_lanes_zero() {
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, "undominated", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let want: Vec<u32> = (0..32).map(|t| if t < 5 { 0 } else { t + 1000 }).collect();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn registers_written_twice_are_per_lane_unless_all_lanes_write_them_together() {
    let n = 77u32;
    let want: Vec<u32> = (0..64u32)
        .flat_map(|t| {
            if t >= 60 {
                return vec![0; 5];
            }
            let mut i = t;
            loop {
                i += 32;
                if i >= n {
                    break;
                }
            }
            let count = if t < 5 { 3 } else { 0 };
            let each = if t % 2 == 0 { 1 } else { 100 };
            vec![i, 0, count, n, n * each]
        })
        .collect();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 5 * 4).unwrap();
        kernel(&m, "multi", backend, [64, 1, 1])
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out), Arg::U32(n)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn a_value_from_both_sides_of_a_branch_that_may_not_meet_again_is_per_lane() {
    let mut want: Vec<u32> = (0..32).map(|t| if t < 7 { 30 } else { 20 }).collect();
    want.extend([1; 32]);
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        kernel(&m, "late", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn lanes_parked_after_a_long_loop_that_others_run_keep_their_own_values() {
    let mut want = vec![1u32; 32];
    want.extend((0..32).map(|t| if t < 5 { 40000 } else { 0 }));
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        kernel(&m, "parked", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn shifts_and_masks_of_lane_indices() {
    for base in [0u32, 3, 16, 32] {
        let mut want: Vec<u32> = (0..96u32)
            .map(|t| {
                let v = t + base;
                (t >> 5) + ((t & 31) << 8) + ((v >> 5) << 16) + ((v & 31) << 24)
            })
            .collect();
        want.extend((0..96u32).map(|t| {
            let v = t + base;
            (t & 63) + ((t >> 6) << 8) + ((v & 63) << 16) + ((v >> 6) << 24)
        }));
        for (backend, dev) in devices() {
            let m = module(&dev);
            let out = dev.buffer_zeroed(192 * 4).unwrap();
            kernel(&m, "bits", backend, [96, 1, 1])
                .launch(
                    [1, 1, 1],
                    [96, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::U32(base)],
                )
                .unwrap();
            assert_eq!(u32s(&out), want, "{backend:?} base {base}");
        }
    }
}

#[test]
fn rows_of_lanes_in_blocks_narrower_than_a_warp() {
    let v = |j: u32| 3 * j + 1;
    for (x, ys) in [(16u32, [16u32, 2, 6]), (8, [8, 4, 12])] {
        for y in ys {
            let n = x * y;
            let want: Vec<u32> = (0..n)
                .map(|i| {
                    let (tx, ty) = (i % x, i / x);
                    // D: t[tx * x + ty], written by thread tx * x + ty if any.
                    let d = tx * x + ty;
                    let d = if d < n { v(d) } else { 0 };
                    v(ty * x + 1) + 1000 * v(x + tx) + 1_000_000 * v(i) + d
                })
                .collect();
            for (backend, dev) in devices() {
                let m = module(&dev);
                let out = dev.buffer_zeroed(n as usize * 4).unwrap();
                kernel(&m, &format!("tiles{x}"), backend, [x, y, 1])
                    .launch([1, 1, 1], [x, y, 1], 0, &[Arg::Buffer(&out)])
                    .unwrap();
                assert_eq!(u32s(&out), want, "{backend:?} block {x}x{y}");
            }
        }
    }
}

#[test]
fn rows_from_masks_and_shifts_of_the_thread_index() {
    let v = |j: u32| 3 * j + 1;
    let mut want: Vec<u32> = (0..64u32)
        .map(|t| v(2 * t - (t & 7)) + 1000 * v(16 * (t >> 3)))
        .collect();
    let mut u = [0u32; 128];
    for t in 0..64u32 {
        u[(2 * t - (t & 7)) as usize] = t + 1;
    }
    want.extend(u);
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(192 * 4).unwrap();
        kernel(&m, "rowbits", backend, [64, 1, 1])
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn collectives_go_on_without_lanes_parked_where_they_only_exit() {
    let mut outs = Vec::new();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, "parkshfl", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        outs.push(u32s(&out));
    }
    assert_eq!(outs[0], outs[1]);
    // Lanes whose partners are live: partner values; 10 even lanes vote.
    let v = |t: u32| 5 * t + 2;
    for t in 0..16u32 {
        assert_eq!(outs[0][t as usize], v(t + 1) + v(t ^ 3) + 10, "lane {t}");
    }
}

#[test]
fn known_strides_gather_and_scatter() {
    let input: Vec<u32> = (0..320).map(|j| j * 7 + 1).collect();
    let mut want = vec![9u32; 192];
    for t in 0..64 {
        want[3 * t] = input[5 * t] + t as u32;
    }
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_from(&[9u32; 192]).unwrap();
        let inp = dev.buffer_from(&input).unwrap();
        kernel(&m, "strided", backend, [64, 1, 1])
            .launch(
                [1, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&out), Arg::Buffer(&inp)],
            )
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn lanes_storing_to_one_address_leave_the_last_lanes_value() {
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(4 * 4).unwrap();
        kernel(&m, "samewhere", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(u32s(&out), vec![31, 31, 30, 29], "{backend:?}");
    }
}

#[test]
fn nans_from_arithmetic_stay_canonical_through_moves_shuffles_abs_and_neg() {
    let nan = 0x7fff_ffffu32;
    let x = |t: u32| {
        if t % 2 == 0 {
            nan
        } else {
            f32::INFINITY.to_bits()
        }
    };
    let mut want: Vec<u32> = (0..32).map(|t| x(t ^ 2)).collect();
    want.extend((0..32).map(|t| x(t ^ 2)));
    want.extend((0..32).map(|t| x(t) & 0x7fff_ffff));
    want.extend((0..32).map(|t| x(t) ^ 0x8000_0000));
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(128 * 4).unwrap();
        kernel(&m, "nanmoves", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let got = u32s(&out);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{backend:?}: word {i}: {g:#x} != {w:#x}");
        }
    }
}

#[test]
fn nans_through_selects_are_canonical_unless_a_constant_says_otherwise() {
    let nan = 0x7fff_ffffu32;
    let mut want: Vec<u32> = (0..32)
        .map(|t| if t < 16 { nan } else { 1.0f32.to_bits() })
        .collect();
    want.extend((0..32).map(|t| match t {
        16.. => 0x7fc0_0001,
        _ if t % 2 == 0 => nan,
        _ => f32::INFINITY.to_bits(),
    }));
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        kernel(&m, "nanselects", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let got = u32s(&out);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{backend:?}: word {i}: {g:#x} != {w:#x}");
        }
    }
}

#[test]
fn lanes_whose_guard_is_off_take_no_part_in_a_shuffle() {
    let together: Vec<u32> = (0..32).map(|t| if t < 20 { t } else { 7 }).collect();
    let apart: Vec<u32> = (0..32)
        .map(|t| {
            if t < 20 {
                t
            } else if t < 28 {
                7
            } else {
                9
            }
        })
        .collect();
    for (name, want) in [("guardedshfl", together), ("guardedshfl2", apart)] {
        for (backend, dev) in devices() {
            let m = module(&dev);
            let out = dev.buffer_zeroed(32 * 4).unwrap();
            kernel(&m, name, backend, [32, 1, 1])
                .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
                .unwrap();
            assert_eq!(u32s(&out), want, "{name} {backend:?}");
        }
    }
}

#[test]
fn grid_stride_loops_keep_the_index_affine_while_lanes_leave() {
    let n = 1000u32;
    let input: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let want: Vec<u32> = (0..n).map(|i| (input[i as usize] & 255) + i).collect();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let (out, inp) = (
            dev.buffer_zeroed(n as usize * 4).unwrap(),
            dev.buffer_from(&input).unwrap(),
        );
        kernel(&m, "gridbytes", backend, [64, 1, 1])
            .launch(
                [2, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&out), Arg::Buffer(&inp), Arg::U32(n)],
            )
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn values_written_in_a_loop_lanes_leave_one_by_one_stay_per_lane() {
    let n = 200u32;
    let want: Vec<u32> = (0..32).map(|t| (t..n).step_by(32).count() as u32).collect();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, "tripcount", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out), Arg::U32(n)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn lanes_meet_after_a_long_loop_even_across_a_yield() {
    let sum = |t: u32| (0..700 * t).fold(0u32, |a, j| a.wrapping_add(j));
    let want: Vec<u32> = (0..32).map(|t| sum((t + 1) % 32)).collect();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, "meetshfl", backend, [32, 1, 1])
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}");
    }
}

#[test]
fn a_lock_holder_waiting_where_lanes_meet_gets_its_turn() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new()
            .with_backend(backend)
            .with_timeout(Some(std::time::Duration::from_secs(30)));
        let m = module(&dev);
        let (lock, counter) = (dev.buffer_zeroed(4).unwrap(), dev.buffer_zeroed(4).unwrap());
        kernel(&m, "spinlock", backend, [64, 1, 1])
            .launch(
                [2, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&lock), Arg::Buffer(&counter)],
            )
            .unwrap();
        assert_eq!(u32s(&counter), vec![128], "{backend:?}");
    }
}

#[test]
fn rows_of_sixteen_words_load_as_one_transposed_block() {
    let n = 100u32;
    let input: Vec<u32> = (0..n * 16)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 8)
        .collect();
    let want: Vec<u32> = (0..n as usize)
        .map(|t| {
            let row = (0..16).fold(0u32, |a, j| {
                a.wrapping_add((j as u32 + 1).wrapping_mul(input[16 * t + j]))
            });
            row.wrapping_add(16_000).wrapping_add(input[t])
        })
        .collect();
    for (backend, dev) in devices() {
        let m = module(&dev);
        let (out, inp) = (
            dev.buffer_zeroed(n as usize * 4).unwrap(),
            dev.buffer_from(&input).unwrap(),
        );
        for name in ["rowloads", "rowloads2"] {
            // 100 threads: the last warp runs 4 lanes (no block load).
            kernel(&m, name, backend, [64, 1, 1])
                .launch(
                    [2, 1, 1],
                    [64, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::Buffer(&inp), Arg::U32(n)],
                )
                .unwrap();
            assert_eq!(u32s(&out), want, "{backend:?} {name}");
        }
    }
}

#[test]
fn accesses_through_a_widened_index_that_wraps_take_the_lanes_before_the_jump() {
    let src: Vec<f32> = (0..16).map(|i| i as f32 + 0.5).collect();
    let mut expect = src.clone();
    expect.extend([0.0; 16]);
    for (backend, dev) in devices() {
        let m = module(&dev);
        let k = kernel(&m, "load_past_jump", backend, [32, 1, 1]);
        let s = dev.buffer_from(&src).unwrap();
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        // Lane t reads src + 4 * (t - 16 mod 2^32): for t < 16 that is
        // 4 * (2^32 - 16 + t) bytes past the pointer, so pass src minus
        // 4 * (2^32 - 16).
        let p = s.device_ptr().wrapping_sub(4 * ((1u64 << 32) - 16));
        k.launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out), Arg::U64(p)])
            .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
        assert_eq!(out.to_vec::<f32>().unwrap(), expect, "{backend:?}");
        let doubled: Vec<f32> = src.iter().map(|x| 2.0 * x).collect();
        assert_eq!(s.to_vec::<f32>().unwrap(), doubled, "{backend:?}");
    }
}

/// Two pages of host memory 2^34 bytes apart (the second one page below
/// `first + 2^34`), unmapped on drop; `None` if the address space there is
/// taken.
struct FarPages(*mut u8, *mut u8);

const PAGE: usize = 4096;
const FAR: usize = 1 << 34;

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn munmap(addr: *mut u8, len: usize) -> i32;
    fn mprotect(addr: *mut u8, len: usize, prot: i32) -> i32;
}

impl FarPages {
    fn new() -> Option<FarPages> {
        // PROT_READ | PROT_WRITE; MAP_PRIVATE | MAP_ANONYMOUS, plus
        // MAP_FIXED_NOREPLACE for the second (never over a mapping).
        let (rw, anon, noreplace) = (3, 0x22, 0x10_0000);
        let fail = usize::MAX as *mut u8;
        for _ in 0..8 {
            let a = unsafe { mmap(std::ptr::null_mut(), PAGE, rw, anon, -1, 0) };
            if a == fail {
                return None;
            }
            let want = a.wrapping_add(FAR - PAGE);
            let b = unsafe { mmap(want, PAGE, rw, anon | noreplace, -1, 0) };
            if b == want {
                return Some(FarPages(a, b));
            }
            unsafe {
                if b != fail {
                    munmap(b, PAGE);
                }
                munmap(a, PAGE);
            }
        }
        None
    }

    /// The `n` f32s at the start of the first page, and the `n` at the
    /// end of the second.
    fn floats(&mut self, n: usize) -> (&mut [f32], &mut [f32]) {
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.0.cast(), n),
                std::slice::from_raw_parts_mut(self.1.add(PAGE - 4 * n).cast(), n),
            )
        }
    }
}

impl Drop for FarPages {
    fn drop(&mut self) {
        unsafe {
            munmap(self.0, PAGE);
            munmap(self.1, PAGE);
        }
    }
}

#[test]
fn lanes_on_both_sides_of_a_jump_read_and_write_their_own_elements() {
    // The compiled backend on host pointers only (the interpreter reads
    // its own buffers): 32 lanes, so that the jump falls inside the warp.
    let Some(mut pages) = FarPages::new() else {
        eprintln!("skipped: no two free pages 2^34 bytes apart");
        return;
    };
    let (low, high) = pages.floats(16);
    for i in 0..16 {
        low[i] = 100.0 + i as f32;
        high[i] = i as f32 + 0.5;
    }
    let dev = Device::new()
        .with_backend(Backend::Cpu)
        .with_warp_width(Some(32));
    let m = module(&dev);
    let k = kernel(&m, "both_sides_of_jump", Backend::Cpu, [32, 1, 1]);
    let out = dev.buffer_zeroed(32 * 4).unwrap();
    k.launch(
        [1, 1, 1],
        [32, 1, 1],
        0,
        &[Arg::Buffer(&out), Arg::U64(pages.0 as u64)],
    )
    .unwrap();
    // Lane t < 16 reads high[t], lane t >= 16 low[t - 16].
    let want: Vec<f32> = (0..32)
        .map(|t| {
            if t < 16 {
                t as f32 + 0.5
            } else {
                100.0 + (t - 16) as f32
            }
        })
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    let (low, high) = pages.floats(16);
    for i in 0..16 {
        let odd = i % 2 == 1;
        let (h, l) = (i as f32 + 0.5, 100.0 + i as f32);
        assert_eq!(high[i], if odd { 2.0 * h } else { h }, "high {i}");
        assert_eq!(low[i], if odd { 2.0 * l } else { l }, "low {i}");
    }
}

#[test]
fn indices_from_memory_that_wrap_inside_a_warp_reach_both_sides() {
    // Lane t's index is idx0 + t with 32-bit wrapping: past i32::MAX
    // (signed) or u32::MAX (unsigned) after lane 5. Widened, lanes 0-5
    // read the last 6 floats of the high page, lanes 6-31 the first 26 of
    // the low page; one vector load from lane 0's element would run off
    // the high page.
    let Some(mut pages) = FarPages::new() else {
        eprintln!("skipped: no two free pages 2^34 bytes apart");
        return;
    };
    let high_at = pages.1 as u64;
    let dev = Device::new()
        .with_backend(Backend::Cpu)
        .with_warp_width(Some(32));
    let m = module(&dev);
    for (name, idx0) in [
        ("indexed_wrap_s", i32::MAX as u32 - 5),
        ("indexed_wrap_u", u32::MAX - 5),
    ] {
        let (low, high) = pages.floats(26);
        for i in 0..26 {
            low[i] = 100.0 + i as f32;
            high[i] = i as f32 + 0.5;
        }
        // The base that puts lane 0's element 24 bytes below the end of
        // the high page.
        let lane0 = high_at + PAGE as u64 - 24;
        let offset0 = if name.ends_with('s') {
            4 * i64::from(idx0 as i32)
        } else {
            4 * i64::from(idx0)
        };
        let src = lane0.wrapping_sub(offset0 as u64);
        let idx: Vec<u32> = (0..32).map(|t| idx0.wrapping_add(t)).collect();
        let idx = dev.buffer_from(&idx).unwrap();
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, name, Backend::Cpu, [32, 1, 1])
            .launch(
                [1, 1, 1],
                [32, 1, 1],
                0,
                &[Arg::Buffer(&out), Arg::U64(src), Arg::Buffer(&idx)],
            )
            .unwrap();
        let want: Vec<f32> = (0..32)
            .map(|t| {
                if t < 6 {
                    (20 + t) as f32 + 0.5
                } else {
                    100.0 + (t - 6) as f32
                }
            })
            .collect();
        assert_eq!(out.to_vec::<f32>().unwrap(), want, "{name}");
        let (low, high) = pages.floats(26);
        for i in 0..26 {
            assert_eq!(low[i], 2.0 * (100.0 + i as f32), "{name} low {i}");
            let h = i as f32 + 0.5;
            assert_eq!(
                high[i],
                if i >= 20 { 2.0 * h } else { h },
                "{name} high {i}"
            );
        }
    }
}

/// A readable page followed by one that cannot be read, unmapped on drop.
struct GuardedPage(*mut u8);

impl GuardedPage {
    fn new() -> Option<GuardedPage> {
        // PROT_READ | PROT_WRITE; MAP_PRIVATE | MAP_ANONYMOUS.
        let (rw, anon) = (3, 0x22);
        let a = unsafe { mmap(std::ptr::null_mut(), 2 * PAGE, rw, anon, -1, 0) };
        if a == usize::MAX as *mut u8 {
            return None;
        }
        let page = GuardedPage(a);
        // PROT_NONE on the second page.
        (unsafe { mprotect(a.add(PAGE), PAGE, 0) } == 0).then_some(page)
    }

    /// The last `n` f32s of the readable page.
    fn last_floats(&mut self, n: usize) -> &mut [f32] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(PAGE - 4 * n).cast(), n) }
    }
}

impl Drop for GuardedPage {
    fn drop(&mut self) {
        unsafe {
            munmap(self.0, 2 * PAGE);
        }
    }
}

#[test]
fn a_partial_warps_load_stops_where_readable_memory_ends() {
    // 40 floats ending at the end of a readable page: CTA 1's first warp
    // has 8 lanes on (of 32, or of 16 at 16 lanes), and its whole vector
    // would read 96 (32) bytes of the page after it, which faults. Its
    // lanes' elements are all readable, so it must load only them (without
    // AVX-512 a whole vector is read where it stays inside one page, so
    // the test of the page is what keeps this from faulting).
    let Some(mut page) = GuardedPage::new() else {
        eprintln!("skipped: no pages to map and protect");
        return;
    };
    let n = 40u32;
    let input = page.last_floats(n as usize);
    for (i, x) in input.iter_mut().enumerate() {
        *x = i as f32 - 3.5;
    }
    let src = input.as_ptr() as u64;
    for lanes in [16, 32] {
        let dev = Device::new()
            .with_backend(Backend::Cpu)
            .with_warp_width(Some(lanes));
        let m = module(&dev);
        let k = kernel(&m, "stream", Backend::Cpu, [32, 1, 1]);
        let out = dev.buffer_zeroed(n as usize * 4).unwrap();
        let out64 = dev.buffer_zeroed(n as usize * 8).unwrap();
        k.launch(
            [2, 1, 1],
            [32, 1, 1],
            0,
            &[
                Arg::Buffer(&out),
                Arg::Buffer(&out64),
                Arg::U64(src),
                Arg::U32(0),
                Arg::U32(n),
            ],
        )
        .unwrap();
        let want: Vec<f32> = (0..n).map(|i| 2.0 * (i as f32 - 3.5) + 1.0).collect();
        assert_eq!(out.to_vec::<f32>().unwrap(), want, "{lanes} lanes");
        assert_eq!(k.warp_lanes_for([32, 1, 1], [2, 1, 1]), Some(lanes));
    }
}

#[test]
fn reversed_indices_load_and_store_in_reverse_lane_order() {
    let (n, threads) = (200u32, 256u32);
    let input: Vec<u32> = (0..n).map(|i| i * 7 + 3).collect();
    // 199: every lane in range reads; 150 and 40: the index wraps below
    // zero inside a warp; 210: the first lanes are past the end.
    for base in [199u32, 150, 40, 210] {
        let want_out: Vec<u32> = (0..threads)
            .map(|g| {
                let r = base.wrapping_sub(g);
                if r < n {
                    input[r as usize]
                } else {
                    0xdead_beef
                }
            })
            .collect();
        let mut want_back = vec![0u32; n as usize];
        for g in (1..threads).step_by(2) {
            let r = base.wrapping_sub(g);
            if r < n {
                want_back[r as usize] = g;
            }
        }
        let want_wide: Vec<u64> = (0..threads)
            .map(|g| 4 * u64::from(base.wrapping_sub(g)))
            .collect();
        for (backend, dev) in devices() {
            let m = module(&dev);
            let (out, back, wide) = (
                dev.buffer_zeroed(threads as usize * 4).unwrap(),
                dev.buffer_zeroed(n as usize * 4).unwrap(),
                dev.buffer_zeroed(threads as usize * 8).unwrap(),
            );
            let inp = dev.buffer_from(&input).unwrap();
            kernel(&m, "reversed", backend, [64, 1, 1])
                .launch(
                    [threads / 64, 1, 1],
                    [64, 1, 1],
                    0,
                    &[
                        Arg::Buffer(&out),
                        Arg::Buffer(&inp),
                        Arg::Buffer(&back),
                        Arg::Buffer(&wide),
                        Arg::U32(base),
                        Arg::U32(n),
                    ],
                )
                .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
            assert_eq!(u32s(&out), want_out, "{backend:?} base {base}");
            assert_eq!(u32s(&back), want_back, "{backend:?} base {base}");
            assert_eq!(u64s(&wide), want_wide, "{backend:?} base {base}");
        }
    }
}

/// (q, r, table value) as `split_index` writes them for thread `t` of CTA
/// `c` (C's truncating division of the wrapped 32-bit index).
fn split(c: u32, ntid: u32, t: u32, table: &[u32]) -> [u32; 3] {
    let gid = c.wrapping_mul(ntid).wrapping_add(t) as i32;
    let (q, r) = (gid / 16, gid % 16);
    let v = table.get(gid as usize).copied().unwrap_or(0);
    [q as u32, r as u32, v]
}

#[test]
fn signed_index_split_by_sixteen_in_small_grids() {
    // 16 and 8: CTAs packed two and four to a warp (`%ntid.x` a constant
    // register there).
    for (grid, block) in [(7u32, 96u32), (9, 16), (13, 8)] {
        let table: Vec<u32> = (0..grid * block)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let want: Vec<u32> = (0..grid)
            .flat_map(|c| (0..block).flat_map(move |t| split(c, block, t, &[])))
            .collect();
        for (backend, dev) in devices() {
            let m = module(&dev);
            if backend == Backend::Cpu {
                let k = m.kernel("split_index").unwrap();
                let per_warp = match &*k.compiled([block, 1, 1]) {
                    Ok(c) => c.ctas_per_warp(),
                    Err(e) => panic!("{e}"),
                };
                assert_eq!(per_warp, (32 / block).max(1), "block {block}");
            }
            let out = dev.buffer_zeroed((grid * block * 12) as usize).unwrap();
            let tab = dev.buffer_from(&table).unwrap();
            kernel(&m, "split_index", backend, [block, 1, 1])
                .launch(
                    [grid, 1, 1],
                    [block, 1, 1],
                    0,
                    &[
                        Arg::Buffer(&out),
                        Arg::Buffer(&tab),
                        Arg::U32(0),
                        Arg::U32(1),
                    ],
                )
                .unwrap();
            let got = u32s(&out);
            for (i, (g, w)) in got.chunks(3).zip(want.chunks(3)).enumerate() {
                let value = table[i];
                assert_eq!(
                    g,
                    [w[0], w[1], value],
                    "{backend:?} block {block} thread {i}"
                );
            }
        }
    }
}

/// Past 2^31 threads in x a thread's `int` index wraps negative: the
/// launch must run code compiled without the small-grid knowledge (that
/// code would round q down and leave r non-negative). Only the last CTAs
/// write; the interpreter would take minutes over 2^31 threads.
#[test]
fn signed_index_split_by_sixteen_past_2_pow_31_threads() {
    let block = 1024u32;
    let from = (1u32 << 21) - 1; // the last CTA below 2^31 threads, then two past it
    let grid = from + 3;
    let dev = Device::new().with_backend(Backend::Cpu);
    let m = module(&dev);
    let k = kernel(&m, "split_index", Backend::Cpu, [block, 1, 1]);
    let (used, why) = k.effective_backend_for([block, 1, 1], [grid, 1, 1]);
    assert_eq!(used, Backend::Cpu, "{why:?}");
    let out = dev.buffer_zeroed((3 * block * 12) as usize).unwrap();
    let tab = dev.buffer_zeroed(64).unwrap();
    k.launch(
        [grid, 1, 1],
        [block, 1, 1],
        0,
        &[
            Arg::Buffer(&out),
            Arg::Buffer(&tab),
            Arg::U32(from),
            Arg::U32(0),
        ],
    )
    .unwrap();
    let want: Vec<u32> = (from..grid)
        .flat_map(|c| (0..block).flat_map(move |t| split(c, block, t, &[])))
        .collect();
    let got = u32s(&out);
    for (i, (g, w)) in got.chunks(3).zip(want.chunks(3)).enumerate() {
        assert_eq!(g, w, "thread {i} of the last CTAs");
    }
    assert!(
        want.chunks(3).any(|w| (w[1] as i32) < 0),
        "some index is negative"
    );
}

#[test]
fn streaming_stores_write_what_cached_stores_write() {
    // Partial last warps, and outputs on and off 64-byte alignment.
    let n = 32 * 41 + 7;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    for off in [0u32, 1, 16, 3] {
        let want: Vec<f32> = std::iter::repeat(0.0)
            .take(off as usize)
            .chain(input.iter().map(|x| 2.0 * x + 1.0))
            .collect();
        let want64: Vec<u64> = std::iter::repeat(0)
            .take(off as usize)
            .chain((0..n as u64).map(|i| 3 * i))
            .collect();
        for streaming in [Some(true), Some(false), None] {
            for threads in [1, 0] {
                let dev = Device::new()
                    .with_backend(Backend::Cpu)
                    .with_streaming_stores(streaming)
                    .with_threads(threads);
                let m = module(&dev);
                let k = kernel(&m, "stream", Backend::Cpu, [64, 1, 1]);
                let (out, out64) = (
                    dev.buffer_zeroed((n + off) as usize * 4).unwrap(),
                    dev.buffer_zeroed((n + off) as usize * 8).unwrap(),
                );
                let inp = dev.buffer_from(&input).unwrap();
                k.launch(
                    [n.div_ceil(64), 1, 1],
                    [64, 1, 1],
                    0,
                    &[
                        Arg::Buffer(&out),
                        Arg::Buffer(&out64),
                        Arg::Buffer(&inp),
                        Arg::U32(off),
                        Arg::U32(n),
                    ],
                )
                .unwrap();
                let got: Vec<f32> = out.to_vec().unwrap();
                assert_eq!(got, want, "off {off}, {streaming:?}, {threads} threads");
                assert_eq!(
                    u64s(&out64),
                    want64,
                    "off {off}, {streaming:?}, {threads} threads (u64)"
                );
                // The non-temporal path is in the code (the launch decides).
                let c = k.compiled([64, 1, 1]);
                let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
                assert!(ir.contains("!nontemporal"), "no streaming store emitted");
            }
        }
    }
}

/// Grid-stride sums with loads that prefetch by their stride: by default
/// on Intel CPUs only (grid-stride loops), in every loop with
/// `WARPFOLD_PREFETCH=stride`, never with `off`. Compilation reads the
/// knob, so the test runs again in processes of their own that have it,
/// and checks in each whether the prefetch is emitted.
#[test]
fn stride_prefetch_leaves_grid_stride_sums_alone() {
    let knob = knob_or_run_again(
        "stride_prefetch_leaves_grid_stride_sums_alone",
        "WARPFOLD_PREFETCH",
        &["stride", "off"],
    );
    let want = match knob.as_deref() {
        Some("stride") => true,
        Some("off") => false,
        _ => intel_host(),
    };
    grid_stride_sums(Some(want));
}

/// Loads outside loops prefetch what the worker's next CTAs will read:
/// on every CPU where a kernel without loops makes one load (`stream`: a
/// CTA reads its slice of a stream in one burst), on Intel CPUs only
/// where it makes more (`rowloads`: 17), in kernels with barriers
/// (`streambar`) not in code with AVX-512 on other CPUs, never with
/// `WARPFOLD_PREFETCH=off`. Compilation reads the knob, so the test runs
/// again in a process of its own that has it.
#[test]
fn ctas_reading_one_stream_prefetch_what_the_next_ctas_read() {
    let knob = knob_or_run_again(
        "ctas_reading_one_stream_prefetch_what_the_next_ctas_read",
        "WARPFOLD_PREFETCH",
        &["off"],
    );
    let on = knob.as_deref() != Some("off");
    let dev = Device::new().with_backend(Backend::Cpu);
    let m = module(&dev);
    for name in ["stream", "rowloads", "streambar"] {
        let k = kernel(&m, name, Backend::Cpu, [64, 1, 1]);
        let c = k.compiled([64, 1, 1]);
        let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
        // The code's features, not the host's: `WARPFOLD_CPU` may cap them.
        let avx512 = ir.contains("+avx512f");
        let want = on
            && match name {
                "stream" => true,
                "rowloads" => intel_host(),
                // With a barrier (a block reduction): not in AVX-512 code
                // on CPUs other than Intel's (`emit::cta_stream`).
                _ => intel_host() || !avx512,
            };
        assert_eq!(ir.contains("pf_stride"), want, "{name}: prefetch emitted");
    }
}

/// A trip round a grid-stride loop costs an eighth of a turn's budget, so
/// the warps of a CTA take turns every 8 trips; with budgets whose eighth
/// is 2, 3 and 5 (and the default), the sums are still every lane's own,
/// and the loop's back edge spends that much. Compilation reads the knob:
/// the test runs again in processes of their own that have it.
#[test]
fn grid_stride_loops_take_turns_every_few_trips() {
    let budget = knob_or_run_again(
        "grid_stride_loops_take_turns_every_few_trips",
        "WARPFOLD_YIELD_BUDGET",
        &["16", "24", "40"],
    );
    // At least 1 (the test script also runs everything with a budget of 2).
    let cost = (budget.map_or(16384, |b| b.parse::<u32>().unwrap()) / 8).max(1);
    grid_stride_sums(None);
    let dev = Device::new().with_backend(Backend::Cpu);
    let m = module(&dev);
    let k = kernel(&m, "gridstride", Backend::Cpu, [48, 1, 1]);
    let c = k.compiled([48, 1, 1]);
    let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
    let lines: Vec<&str> = ir.lines().collect();
    let spends = lines.windows(2).any(|w| {
        w[0].contains(" = sub i32 ")
            && w[0].ends_with(&format!(", {cost}"))
            && w[1].contains("i32* %budget")
    });
    assert!(spends, "a back edge spends {cost} of the budget");
}

/// Off Intel CPUs a grid-stride loop's forward load prefetches what the
/// same trip reads one CTA later: `blockDim.x` lanes of 4 bytes on (64
/// threads: 256 bytes ahead), a line per 64 bytes of the warp's span. The
/// reversed load (`n - 1 - i`) does not (its lanes step backwards).
#[test]
fn grid_stride_loads_prefetch_the_next_ctas_data() {
    let knob = std::env::var("WARPFOLD_PREFETCH").ok();
    if intel_host() || matches!(knob.as_deref(), Some("off" | "stride")) {
        return;
    }
    let dev = Device::new().with_backend(Backend::Cpu);
    let m = module(&dev);
    let k = kernel(&m, "gridstride", Backend::Cpu, [64, 1, 1]);
    let c = k.compiled([64, 1, 1]);
    let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
    let lines: Vec<&str> = ir.lines().collect();
    let prefetched = |offset: i64| {
        lines.windows(3).any(|w| {
            w[0].contains(" = add i64 ")
                && w[0].ends_with(&format!(", {offset}"))
                && w[2].contains("@llvm.prefetch")
        })
    };
    // (a second line, 320, only where warps have 16 lanes or more)
    assert!(prefetched(256), "one CTA ahead");
    assert!(!prefetched(-256), "not for the reversed load");
    grid_stride_sums(None);
}

/// `prefetched`: whether the IR must (or must not) have stride prefetches.
fn grid_stride_sums(prefetched: Option<bool>) {
    // Partial warps (48-thread blocks), a walk that ends mid-row.
    let (grid, block) = (5u32, 48u32);
    let threads = grid * block;
    let n = threads * 17 + 11;
    let input: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
    let mut want = vec![0.0f32; threads as usize];
    let mut want2 = vec![0.0f32; threads as usize];
    for t in 0..threads {
        let mut i = t;
        while i < n {
            want[t as usize] += 2.0 * input[i as usize] + input[(n - 1 - i) as usize];
            i += threads;
        }
        for k in (0..=n / threads).rev() {
            let j = k * threads + t;
            if j < n {
                want2[t as usize] += input[j as usize];
            }
        }
    }
    for (backend, dev) in devices() {
        let m = module(&dev);
        let k = kernel(&m, "gridstride", backend, [block, 1, 1]);
        let (out, out2) = (
            dev.buffer_zeroed(threads as usize * 4).unwrap(),
            dev.buffer_zeroed(threads as usize * 4).unwrap(),
        );
        let inp = dev.buffer_from(&input).unwrap();
        k.launch(
            [grid, 1, 1],
            [block, 1, 1],
            0,
            &[
                Arg::Buffer(&out),
                Arg::Buffer(&out2),
                Arg::Buffer(&inp),
                Arg::U32(n),
            ],
        )
        .unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), want, "{backend:?} forward");
        assert_eq!(out2.to_vec::<f32>().unwrap(), want2, "{backend:?} backward");
        if let (Backend::Cpu, Some(want)) = (backend, prefetched) {
            let c = k.compiled([block, 1, 1]);
            let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
            assert_eq!(ir.contains("pf_stride"), want, "stride prefetch emitted");
        }
    }
}

#[test]
fn colliding_scatters_keep_the_last_storing_lane_in_every_element_size() {
    // Positions inside each warp, with collisions (a fixed scramble).
    let idx: Vec<u32> = (0..64u32)
        .map(|t| t / 32 * 32 + (t * 7 + t / 5) % 11)
        .collect();
    let mut want = vec![u64::MAX; 64];
    let mut want_sh = vec![0u64; 64];
    for t in (0..64u32).filter(|t| t % 3 != 0) {
        want[idx[t as usize] as usize] = u64::from(t);
        want_sh[idx[t as usize] as usize] = u64::from(t);
    }
    for (backend, dev) in devices() {
        let m = module(&dev);
        let o8 = dev.buffer_from(&[0xffu8; 64]).unwrap();
        let o16 = dev.buffer_from(&[0xffffu16; 64]).unwrap();
        let o32 = dev.buffer_from(&[u32::MAX; 64]).unwrap();
        let o64 = dev.buffer_from(&[u64::MAX; 64]).unwrap();
        let osh = dev.buffer_zeroed(64 * 4).unwrap();
        let ib = dev.buffer_from(&idx).unwrap();
        kernel(&m, "collide", backend, [64, 1, 1])
            .launch(
                [1, 1, 1],
                [64, 1, 1],
                0,
                &[&o8, &o16, &o32, &o64, &osh, &ib].map(Arg::Buffer),
            )
            .unwrap();
        let narrow = |w: &[u64], mask: u64| w.iter().map(|&x| x & mask).collect::<Vec<_>>();
        let got8 = widened(o8.to_vec::<u8>().unwrap());
        let got16 = widened(o16.to_vec::<u16>().unwrap());
        let got32 = widened(u32s(&o32));
        let gotsh = widened(u32s(&osh));
        assert_eq!(got8, narrow(&want, 0xff), "{backend:?} u8");
        assert_eq!(got16, narrow(&want, 0xffff), "{backend:?} u16");
        assert_eq!(got32, narrow(&want, 0xffff_ffff), "{backend:?} u32");
        assert_eq!(u64s(&o64), want, "{backend:?} u64");
        assert_eq!(gotsh, want_sh, "{backend:?} shared");
    }
}

/// What `branchcmp` writes for thread `g` (see its comment).
fn branchcmp_model(g: u32, u: u32, v: u32) -> u32 {
    let (gs, us, vs) = (g as i32, u as i32, v as i32);
    let p1 = gs < us;
    let p7 = gs <= vs;
    let p12 = g != u;
    let conds = [
        p1,
        g < u,
        us > gs,
        gs == us && gs != vs,
        us < 0 || p7,
        (g <= v) ^ (us < gs),
        !p12,
        v <= g || (gs >= us && !p12),
        vs >= gs,
        g <= u,
        gs >= us,
        (g == 70) ^ (gs > -3 && gs > 40 && g < 0xffff_fff0),
    ];
    conds
        .iter()
        .enumerate()
        .map(|(i, &c)| u32::from(c) << i)
        .sum()
}

#[test]
fn branches_on_an_index_against_uniform_values_go_where_each_lane_says() {
    let values: [u32; 12] = [
        0,
        3,
        31,
        32,
        40,
        95,
        200,
        0xffff_fffb,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        17,
    ];
    for (backend, width) in [
        (Backend::Cpu, None),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
        (Backend::Interp, None),
    ] {
        let dev = Device::new().with_backend(backend).with_warp_width(width);
        let m = module(&dev);
        for block in [32u32, 48] {
            let k = kernel(&m, "branchcmp", backend, [block, 1, 1]);
            let n = (3 * block) as usize;
            for (j, &u) in values.iter().enumerate() {
                let v = values[(j * 5 + 3) % values.len()];
                let out = dev.buffer_zeroed(n * 4).unwrap();
                k.launch(
                    [3, 1, 1],
                    [block, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::U32(u), Arg::U32(v)],
                )
                .unwrap();
                let got = u32s(&out);
                for (g, x) in got.iter().enumerate() {
                    let want = branchcmp_model(g as u32, u, v);
                    assert_eq!(
                        *x, want,
                        "{backend:?} width {width:?}, block {block}, u {u:#x} v {v:#x}: thread {g}: {x:#b} != {want:#b}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_branch_on_the_bits_of_a_nan_from_arithmetic_sees_the_canonical_nan() {
    for (backend, dev) in devices() {
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        kernel(&m, "nanbranch", backend, [32, 1, 1])
            .launch(
                [1, 1, 1],
                [32, 1, 1],
                0,
                &[Arg::Buffer(&out), Arg::F32(f32::INFINITY)],
            )
            .unwrap();
        assert_eq!(u32s(&out), vec![1u32; 32], "{backend:?}");
    }
}

#[test]
fn a_store_of_the_last_lane_to_one_address_makes_its_nan_canonical() {
    for (backend, dev) in devices() {
        let m = module(&dev);
        for (block, k, want) in [
            (32, 32, 0x7fff_ffffu32),
            (32, 31, f32::NEG_INFINITY.to_bits()),
            (20, 32, 0x7fff_ffff),
            (20, 5, f32::NEG_INFINITY.to_bits()),
        ] {
            let out = dev.buffer_zeroed(4).unwrap();
            kernel(&m, "nanlastlane", backend, [block, 1, 1])
                .launch(
                    [1, 1, 1],
                    [block, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::F32(f32::INFINITY), Arg::U32(k)],
                )
                .unwrap();
            assert_eq!(u32s(&out), vec![want], "{backend:?} block {block} k {k}");
        }
    }
}

#[test]
fn branches_on_an_index_that_wraps_inside_the_warp() {
    let block = 64u32;
    for base in [0x7fff_fff0u32, 0xffff_fff0, 0x7fff_ffe1, 5] {
        for n in [0u32, 3, 0x7fff_fff8, 0x8000_0004, 0xffff_fff8] {
            let want: Vec<u32> = (0..block)
                .map(|t| {
                    let i = base.wrapping_add(t);
                    u32::from((i as i32) < n as i32)
                        | u32::from(i >= n) << 1
                        | u32::from(n as i32 <= i as i32) << 2
                        | u32::from(i == n) << 3
                })
                .collect();
            for (backend, dev) in devices() {
                let m = module(&dev);
                let out = dev.buffer_zeroed(block as usize * 4).unwrap();
                kernel(&m, "wrapcmp", backend, [block, 1, 1])
                    .launch(
                        [1, 1, 1],
                        [block, 1, 1],
                        0,
                        &[Arg::Buffer(&out), Arg::U32(base), Arg::U32(n)],
                    )
                    .unwrap();
                assert_eq!(u32s(&out), want, "{backend:?} base {base:#x} n {n:#x}");
            }
        }
    }
}

#[test]
fn branches_on_lane_flags_made_before_a_loop() {
    for block in [64u32, 40, 7] {
        for (n, pick) in [(5u32, 2u32), (1, 0), (9, 33), (3, 1000)] {
            let want: Vec<u32> = (0..block)
                .map(|t| {
                    let (p1, p2, p4) = (t % 3 == 0, t == pick, t & 4 != 0);
                    (0..n.max(1))
                        .map(|z| {
                            u32::from(!(p1 || p2 || z == 0))
                                + 16 * u32::from(p4 ^ p1)
                                + 256 * u32::from(p2)
                        })
                        .sum()
                })
                .collect();
            for (backend, dev) in devices() {
                let m = module(&dev);
                let out = dev.buffer_zeroed(block as usize * 4).unwrap();
                kernel(&m, "flagloop", backend, [block, 1, 1])
                    .launch(
                        [2, 1, 1],
                        [block, 1, 1],
                        0,
                        &[Arg::Buffer(&out), Arg::U32(n), Arg::U32(pick)],
                    )
                    .unwrap();
                assert_eq!(
                    u32s(&out),
                    want,
                    "{backend:?} block {block} n {n} pick {pick}"
                );
            }
        }
    }
}

/// Kernel `name` over two blocks of `block` threads, reading `input` and
/// writing as many words as `want` has, on both backends, against `want`;
/// the compiled code must take the lowering labelled `path`, except with
/// AVX-512 on an Intel CPU, where it must not (its hardware gathers and
/// scatters stay, see `lower::lane_by_lane`).
fn spaced_launch(name: &str, block: u32, input: &[u32], want: &[u32], path: &str) {
    for (backend, dev) in devices() {
        let m = module(&dev);
        let k = kernel(&m, name, backend, [block, 1, 1]);
        let inp = dev.buffer_from(input).unwrap();
        let out = dev.buffer_zeroed(want.len() * 4).unwrap();
        k.launch(
            [2, 1, 1],
            [block, 1, 1],
            0,
            &[Arg::Buffer(&inp), Arg::Buffer(&out)],
        )
        .unwrap();
        assert_eq!(u32s(&out), want, "{backend:?}, blocks of {block}");
        if backend == Backend::Cpu {
            let c = k.compiled([block, 1, 1]);
            let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
            let hardware = ir.contains("+avx512f") && intel_host();
            assert_eq!(ir.contains(path), !hardware, "{path}");
        }
    }
}

#[test]
fn lanes_reading_a_shared_column_get_their_own_rows_words() {
    for block in [64u32, 40] {
        let n = (block * 2) as usize;
        let input: Vec<u32> = (0..n as u32 * 33)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let want: Vec<u32> = (0..n)
            .flat_map(|i| [input[i * 33 + 5], input[i * 33 + 32]])
            .collect();
        // Full warps load each lane's word by itself (`gather_spaced`),
        // but with AVX-512 on Intel CPUs.
        spaced_launch("spaced_columns", block, &input, &want, "ld_spaced");
    }
}

#[test]
fn lanes_writing_a_shared_column_and_copying_rows_out() {
    for block in [64u32, 40] {
        let n = (block * 2) as usize;
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let want: Vec<u32> = (0..n)
            .flat_map(|i| (0..33).map(move |j| (i, j)))
            .map(|(i, j)| if j == 5 { input[i] } else { i as u32 * 100 + j })
            .collect();
        // Full warps store each lane's word by itself (`scatter_spaced`),
        // but with AVX-512 on Intel CPUs.
        spaced_launch("spaced_rows", block, &input, &want, "st_spaced");
    }
}
