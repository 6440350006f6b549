//! If-then-else diamonds whose lanes split: the compiled backend runs the
//! then arm with its lanes, hands over to the else arm with the others and
//! joins them after it, without the dispatcher. The arms must run in the
//! interpreter's order (then lanes first, each arm in lane order) with
//! exactly their lanes, for full and partial warps, lanes that left
//! before the diamond, and diamonds in loops.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/diamonds.ptx"), "diamonds.ptx")
        .expect("loads")
}

/// What `diamond` writes for `sel` (see the PTX) with blocks of `block`.
fn expected(sel: &[u32], n: usize, block: usize, grid: usize) -> Vec<u32> {
    let mut out = vec![0u32; 2 * n];
    for c in 0..grid {
        for w in 0..block.div_ceil(32) {
            let lanes: Vec<usize> = (w * 32..(w * 32 + 32).min(block))
                .map(|t| c * block + t)
                .filter(|&g| g < n)
                .collect();
            let last_then = lanes.iter().rev().find(|&&g| sel[g] != 0);
            let last_else = lanes.iter().rev().find(|&&g| sel[g] == 0);
            let word = match (last_else, last_then) {
                (Some(&g), _) => g as u32 + 2000,
                (None, Some(&g)) => g as u32 + 1000,
                (None, None) => 0,
            };
            for &g in &lanes {
                out[g] = if sel[g] != 0 { 1 } else { 2 };
                out[n + g] = word;
            }
        }
    }
    out
}

#[test]
fn diamond_arms_run_then_first_with_their_own_lanes() {
    let patterns: [(&str, fn(usize) -> u32); 5] = [
        ("all then", |_| 1),
        ("all else", |_| 0),
        ("alternating", |g| (g % 2) as u32),
        ("one else lane", |g| u32::from(g % 32 != 5)),
        ("scrambled", |g| {
            (g.wrapping_mul(2_654_435_761) >> 13) as u32 & 1
        }),
    ];
    // Full warps; a partial last warp (48); lanes beyond n that wait at the
    // exit while the others run the diamond.
    for (block, grid, n) in [(64, 2, 128), (48, 3, 144), (64, 2, 100), (96, 1, 70)] {
        for (name, f) in patterns {
            let sel: Vec<u32> = (0..grid * block).map(f).collect();
            let want = expected(&sel, n, block, grid);
            for backend in [Backend::Cpu, Backend::Interp] {
                // 32-lane warps, as the interpreter's: slices of 8 or 16
                // lanes would order the race on the word by slice.
                let dev = Device::new()
                    .with_backend(backend)
                    .with_warp_width(Some(32));
                let m = module(&dev);
                let k = m.kernel("diamond").unwrap();
                let b = [block as u32, 1, 1];
                assert_eq!(k.effective_backend(b).0, backend);
                let s = dev.buffer_from(&sel).unwrap();
                let out = dev.buffer_zeroed(2 * n * 4).unwrap();
                k.launch(
                    [grid as u32, 1, 1],
                    b,
                    0,
                    &[Arg::Buffer(&out), Arg::Buffer(&s), Arg::U32(n as u32)],
                )
                .unwrap();
                let what = format!("{backend:?}, {name}, blocks of {block}, n = {n}");
                assert_eq!(out.to_vec::<u32>().unwrap(), want, "{what}");
            }
        }
    }
}

#[test]
fn diamonds_in_loops_take_each_lanes_arm_every_trip() {
    let (block, grid, n) = (96usize, 4usize, 360usize);
    let want: Vec<u32> = (0..n)
        .map(|g| {
            (0..6).fold(0u32, |acc, k| {
                if (g >> k) & 1 != 0 {
                    acc.wrapping_mul(3).wrapping_add(1)
                } else {
                    acc.wrapping_mul(5).wrapping_add(2)
                }
            })
        })
        .collect();
    for (backend, width) in [
        (Backend::Cpu, None),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
        (Backend::Interp, None),
    ] {
        let dev = Device::new().with_backend(backend).with_warp_width(width);
        let m = module(&dev);
        let k = m.kernel("diamond_loop").unwrap();
        let out = dev.buffer_zeroed(n * 4).unwrap();
        k.launch(
            [grid as u32, 1, 1],
            [block as u32, 1, 1],
            0,
            &[Arg::Buffer(&out), Arg::U32(n as u32)],
        )
        .unwrap();
        assert_eq!(
            out.to_vec::<u32>().unwrap(),
            want,
            "{backend:?} width {width:?}"
        );
    }
}
