//! Loads and stores through 32-bit indices read from memory (no lane
//! form): the compiled backend tests a warp's indices for consecutive
//! elements before widening them (`warpfold-cpu`'s `indexed`). Consecutive,
//! shifted, reversed, scrambled and almost-consecutive indices, signed and
//! unsigned, 4- and 8-byte elements, partial warps and 8, 16 and 32 lanes
//! must give the interpreter's results and the ones computed here.

use warpfold::{Arg, Backend, Device};

const N: usize = 1000;
/// Elements of `x`, `xd`, `back` and `backd`: room for indices past `N`.
const M: usize = N + 64;

/// Index patterns, each a permutation of part of `0..M` (so the stores
/// never collide).
fn patterns() -> Vec<(&'static str, Vec<u32>)> {
    let n = N as u32;
    vec![
        ("consecutive", (0..n).collect()),
        ("shifted", (0..n).map(|t| t + 7).collect()),
        ("reversed", (0..n).map(|t| n - 1 - t).collect()),
        // 37 is prime to M = 1064.
        (
            "scrambled",
            (0..n).map(|t| (t * 37 + 11) % M as u32).collect(),
        ),
        // Lanes 17 and 18 of every warp swapped.
        (
            "one_pair_swapped",
            (0..n)
                .map(|t| if matches!(t % 32, 17 | 18) { t ^ 3 } else { t })
                .collect(),
        ),
    ]
}

struct Outputs {
    out: Vec<f32>,
    outd: Vec<f64>,
    back: Vec<f32>,
    backd: Vec<f64>,
}

/// The backends and warp widths each test runs on.
const RUNS: [(Backend, Option<u32>); 4] = [
    (Backend::Interp, None),
    (Backend::Cpu, None),
    (Backend::Cpu, Some(16)),
    (Backend::Cpu, Some(8)),
];

/// A device and kernel `name` of `indexed.ptx`, checked to run on
/// `backend` and, compiled, to have an indexed access.
fn setup(
    backend: Backend,
    width: Option<u32>,
    name: &str,
    block: u32,
) -> (Device, warpfold::Kernel) {
    let dev = Device::new().with_backend(backend).with_warp_width(width);
    let m = dev
        .load_ptx_named(include_str!("kernels/indexed.ptx"), "indexed.ptx")
        .expect("loads");
    let k = m.kernel(name).unwrap();
    let (used, why) = k.effective_backend([block, 1, 1]);
    assert_eq!(used, backend, "{why:?}");
    if backend == Backend::Cpu {
        let c = k.compiled([block, 1, 1]);
        let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
        assert!(ir.contains("; indexed access"), "no indexed access");
    }
    (dev, k)
}

fn run(backend: Backend, width: Option<u32>, j: &[u32], u: &[u32]) -> Outputs {
    let block = 128u32;
    let (dev, k) = setup(backend, width, "gather_scatter", block);
    let x: Vec<f32> = (0..M).map(|i| (i * 13 % 101) as f32 - 50.25).collect();
    let xd: Vec<f64> = (0..M).map(|i| i as f64 * 0.5 + 3.0).collect();
    let out = dev.buffer_zeroed(N * 4).unwrap();
    let outd = dev.buffer_zeroed(N * 8).unwrap();
    let back = dev.buffer_zeroed(M * 4).unwrap();
    let backd = dev.buffer_zeroed(M * 8).unwrap();
    let (xb, xdb) = (dev.buffer_from(&x).unwrap(), dev.buffer_from(&xd).unwrap());
    let (jb, ub) = (dev.buffer_from(j).unwrap(), dev.buffer_from(u).unwrap());
    let grid = (N as u32).div_ceil(block);
    k.launch(
        [grid, 1, 1],
        [block, 1, 1],
        0,
        &[
            Arg::Buffer(&out),
            Arg::Buffer(&outd),
            Arg::Buffer(&back),
            Arg::Buffer(&backd),
            Arg::Buffer(&xb),
            Arg::Buffer(&xdb),
            Arg::Buffer(&jb),
            Arg::Buffer(&ub),
            Arg::I32(N as i32),
        ],
    )
    .unwrap_or_else(|e| panic!("{backend:?} {width:?}: {e}"));
    Outputs {
        out: out.to_vec().unwrap(),
        outd: outd.to_vec().unwrap(),
        back: back.to_vec().unwrap(),
        backd: backd.to_vec().unwrap(),
    }
}

#[test]
fn indexed_loads_and_stores_match_the_interpreter() {
    let x: Vec<f32> = (0..M).map(|i| (i * 13 % 101) as f32 - 50.25).collect();
    let xd: Vec<f64> = (0..M).map(|i| i as f64 * 0.5 + 3.0).collect();
    let pats = patterns();
    for (a, (jname, j)) in pats.iter().enumerate() {
        // The unsigned index follows the next pattern.
        let (uname, u) = &pats[(a + 1) % pats.len()];
        let mut back = vec![0f32; M];
        let mut backd = vec![0f64; M];
        for t in 0..N {
            back[j[t] as usize] = t as f32;
            backd[u[t] as usize] = t as f64;
        }
        let want_out: Vec<f32> = (0..N)
            .map(|t| x[j[t] as usize] * 2.0 + x[u[t] as usize])
            .collect();
        let want_outd: Vec<f64> = (0..N).map(|t| xd[j[t] as usize] - 1.0).collect();
        for (backend, width) in RUNS {
            let got = run(backend, width, j, u);
            let what = format!("{backend:?} {width:?} j {jname} u {uname}");
            same(&got.out, &want_out, &format!("out: {what}"));
            same(&got.outd, &want_outd, &format!("outd: {what}"));
            same(&got.back, &back, &format!("back: {what}"));
            same(&got.backd, &backd, &format!("backd: {what}"));
        }
    }
}

/// Equal, or a panic naming the first element that differs.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {:?}, want {:?}", got[i], want[i]);
    }
}

#[test]
fn shared_atomics_through_narrow_indices_count_what_the_interpreter_counts() {
    // Bins from a byte loaded into a 64-bit register and shifted, and from
    // a masked widened word; 1000 threads in blocks of 96 and 128 (partial
    // warps at the end of each block of 96 and of the grid).
    let n = 1000usize;
    let bytes: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 5)
        .collect();
    let words: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(40_503).rotate_left(11))
        .collect();
    for block in [96u32, 128] {
        let grid = (n as u32).div_ceil(block);
        let mut want_b = vec![0i32; grid as usize * 256];
        let mut want_i = vec![0i32; grid as usize * 64];
        for i in 0..n {
            let b = i / block as usize;
            want_b[b * 256 + (bytes[i] & 255) as usize] += 1;
            want_i[b * 64 + ((words[i] >> 8) % 64) as usize] += i as i32;
        }
        for (backend, width) in RUNS {
            let (dev, k) = setup(backend, width, "shared_bins", block);
            let ob = dev.buffer_zeroed(want_b.len() * 4).unwrap();
            let oi = dev.buffer_zeroed(want_i.len() * 4).unwrap();
            let (bb, wb) = (
                dev.buffer_from(&bytes).unwrap(),
                dev.buffer_from(&words).unwrap(),
            );
            k.launch(
                [grid, 1, 1],
                [block, 1, 1],
                0,
                &[
                    Arg::Buffer(&ob),
                    Arg::Buffer(&oi),
                    Arg::Buffer(&bb),
                    Arg::Buffer(&wb),
                    Arg::I32(n as i32),
                ],
            )
            .unwrap_or_else(|e| panic!("{backend:?} {width:?}: {e}"));
            let what = format!("{backend:?} {width:?} block {block}");
            same(
                &ob.to_vec::<i32>().unwrap(),
                &want_b,
                &format!("byte bins: {what}"),
            );
            same(
                &oi.to_vec::<i32>().unwrap(),
                &want_i,
                &format!("word bins: {what}"),
            );
        }
    }
}

#[test]
fn shared_atomics_through_loaded_indices_count_the_values_loaded() {
    // Bins from a word loaded and then overwritten before its atomic (the
    // `again` argument is the `idx` buffer: read again, the index would be
    // 7), from a byte of each word and from a second word array, each read
    // again per lane where nothing changed it; blocks of 96 (partial
    // warps) and 128.
    let n = 1000usize;
    let bytes: Vec<u8> = (0..4 * n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let idx: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(40_503) % 64).collect();
    let other: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 3) % 64).collect();
    for block in [96u32, 128] {
        let grid = (n as u32).div_ceil(block);
        let mut want = vec![0i32; grid as usize * 320];
        for i in 0..n {
            let b = i / block as usize * 320;
            want[b + 256 + idx[i] as usize] += 1;
            want[b + bytes[4 * i + 1] as usize] += 2;
            want[b + 256 + other[i] as usize] += 4;
        }
        for (backend, width) in RUNS {
            let (dev, k) = setup(backend, width, "loaded_bins", block);
            if backend == Backend::Cpu {
                let c = k.compiled([block, 1, 1]);
                let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
                assert!(ir.contains("; replayed indices"), "no index read again");
            }
            let out = dev.buffer_zeroed(want.len() * 4).unwrap();
            let bb = dev.buffer_from(&bytes).unwrap();
            let ib = dev.buffer_from(&idx).unwrap();
            let ob = dev.buffer_from(&other).unwrap();
            k.launch(
                [grid, 1, 1],
                [block, 1, 1],
                0,
                &[
                    Arg::Buffer(&out),
                    Arg::Buffer(&bb),
                    Arg::Buffer(&ib),
                    Arg::Buffer(&ib),
                    Arg::Buffer(&ob),
                    Arg::I32(n as i32),
                ],
            )
            .unwrap_or_else(|e| panic!("{backend:?} {width:?}: {e}"));
            let what = format!("{backend:?} {width:?} block {block}");
            same(
                &out.to_vec::<i32>().unwrap(),
                &want,
                &format!("bins: {what}"),
            );
            same(
                &ib.to_vec::<u32>().unwrap(),
                &vec![7; n],
                &format!("stored: {what}"),
            );
        }
    }
}

#[test]
fn indices_the_kernel_also_keeps_are_not_read_again() {
    // Each index loaded is also stored: reading it again for the atomic
    // could give a different value than the one stored (another thread
    // may write the word in between), so the compiled code must not.
    let n = 1000usize;
    let other: Vec<u32> = (0..n as u32).map(|i| (i * 11 + 5) % 64).collect();
    let block = 128u32;
    let grid = (n as u32).div_ceil(block);
    let mut want = vec![0i32; grid as usize * 64];
    for i in 0..n {
        want[i / block as usize * 64 + other[i] as usize] += 4;
    }
    for (backend, width) in RUNS {
        let (dev, k) = setup(backend, width, "kept_bins", block);
        if backend == Backend::Cpu {
            let c = k.compiled([block, 1, 1]);
            let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
            assert!(!ir.contains("; replayed indices"), "index read again");
        }
        let out = dev.buffer_zeroed(want.len() * 4).unwrap();
        let ob = dev.buffer_from(&other).unwrap();
        let seen = dev.buffer_zeroed(n * 4).unwrap();
        k.launch(
            [grid, 1, 1],
            [block, 1, 1],
            0,
            &[
                Arg::Buffer(&out),
                Arg::Buffer(&ob),
                Arg::Buffer(&seen),
                Arg::I32(n as i32),
            ],
        )
        .unwrap_or_else(|e| panic!("{backend:?} {width:?}: {e}"));
        let what = format!("{backend:?} {width:?}");
        same(
            &out.to_vec::<i32>().unwrap(),
            &want,
            &format!("bins: {what}"),
        );
        same(
            &seen.to_vec::<u32>().unwrap(),
            &other,
            &format!("seen: {what}"),
        );
    }
}
