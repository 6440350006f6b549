//! Vector loads and stores (`ld.v2`, `st.v4`, ...) whose threads access
//! consecutive groups of elements (arrays of float4, int2, double2,
//! short4): the compiled backend moves a warp's groups as one interleaved
//! vector. Full and partial warps, threads that access nothing, and 8, 16
//! and 32 lanes must give the interpreter's results.

use warpfold::{Arg, Backend, Device};

fn ptx() -> &'static str {
    include_str!("kernels/vector_groups.ptx")
}

fn device(backend: Backend, width: Option<u32>) -> Device {
    Device::new().with_backend(backend).with_warp_width(width)
}

fn input(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 29) % 83) as f32 * 0.75 - 20.0)
        .collect()
}

/// The four output arrays of `groups` as bytes.
fn groups(backend: Backend, width: Option<u32>, block: u32, n: i32, skip: i32) -> Vec<Vec<u8>> {
    let dev = device(backend, width);
    let m = dev
        .load_ptx_named(ptx(), "vector_groups.ptx")
        .expect("loads");
    let k = m.kernel("groups").unwrap();
    assert_eq!(k.effective_backend([block, 1, 1]).0, backend);
    let threads = 2 * block as usize;
    let outs: Vec<_> = [16, 8, 16, 8]
        .iter()
        .map(|size| dev.buffer_zeroed(threads * size).unwrap())
        .collect();
    let inp = dev.buffer_from(&input(threads)).unwrap();
    k.launch(
        [2, 1, 1],
        [block, 1, 1],
        0,
        &[
            Arg::Buffer(&outs[0]),
            Arg::Buffer(&outs[1]),
            Arg::Buffer(&outs[2]),
            Arg::Buffer(&outs[3]),
            Arg::Buffer(&inp),
            Arg::I32(n),
            Arg::I32(skip),
        ],
    )
    .unwrap();
    outs.iter().map(|b| b.to_vec::<u8>().unwrap()).collect()
}

#[test]
fn groups_of_two_and_four_elements_match_the_interpreter() {
    for block in [64, 80, 100] {
        for (n, skip) in [(1000, -1), (1000, 3), (2 * block as i32 - 9, -1), (37, 0)] {
            let want = groups(Backend::Interp, None, block, n, skip);
            assert!(want[0].iter().any(|b| *b != 0));
            for width in [Some(32), Some(16), Some(8)] {
                let got = groups(Backend::Cpu, width, block, n, skip);
                assert_eq!(got, want, "block {block} n {n} skip {skip} width {width:?}");
            }
        }
    }
}

#[test]
fn shared_groups_of_four_match_the_interpreter() {
    for block in [64, 96, 256] {
        for skip in [-1, 2] {
            let run = |backend, width| {
                let dev = device(backend, width);
                let m = dev
                    .load_ptx_named(ptx(), "vector_groups.ptx")
                    .expect("loads");
                let k = m.kernel("shared_groups").unwrap();
                let threads = 2 * block as usize;
                let out = dev.buffer_zeroed(threads * 4).unwrap();
                let inp = dev.buffer_from(&input(threads)).unwrap();
                k.launch(
                    [2, 1, 1],
                    [block, 1, 1],
                    0,
                    &[Arg::Buffer(&out), Arg::Buffer(&inp), Arg::I32(skip)],
                )
                .unwrap();
                out.to_vec::<f32>().unwrap()
            };
            let want = run(Backend::Interp, None);
            for width in [Some(32), Some(16), Some(8)] {
                assert_eq!(
                    run(Backend::Cpu, width),
                    want,
                    "block {block} skip {skip} width {width:?}"
                );
            }
        }
    }
}

/// What `load_groups` writes: one weighted sum per thread.
fn load_groups(backend: Backend, width: Option<u32>, block: u32, n: i32, skip: i32) -> Vec<f32> {
    let dev = device(backend, width);
    let m = dev
        .load_ptx_named(ptx(), "vector_groups.ptx")
        .expect("loads");
    let k = m.kernel("load_groups").unwrap();
    assert_eq!(k.effective_backend([block, 1, 1]).0, backend);
    let threads = 2 * block as usize;
    let x = input(8 * threads);
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    // Each array from the same bytes: float4s, int2s (small integers from
    // the floats' bits), double2s (of the floats) and short4s.
    let ints: Vec<i32> = x
        .iter()
        .map(|v| (v.to_bits() >> 20) as i32 - 1000)
        .collect();
    let doubles: Vec<f64> = x.iter().map(|v| f64::from(*v) * 1.5).collect();
    let shorts: Vec<i16> = bytes
        .chunks(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]) >> 4)
        .collect();
    let (f4, i2, d2, s4) = (
        dev.buffer_from(&x).unwrap(),
        dev.buffer_from(&ints).unwrap(),
        dev.buffer_from(&doubles).unwrap(),
        dev.buffer_from(&shorts).unwrap(),
    );
    let out = dev.buffer_zeroed(threads * 4).unwrap();
    k.launch(
        [2, 1, 1],
        [block, 1, 1],
        0,
        &[
            Arg::Buffer(&out),
            Arg::Buffer(&f4),
            Arg::Buffer(&i2),
            Arg::Buffer(&d2),
            Arg::Buffer(&s4),
            Arg::I32(n),
            Arg::I32(skip),
        ],
    )
    .unwrap();
    out.to_vec::<f32>().unwrap()
}

#[test]
fn loads_of_groups_of_two_and_four_elements_match_the_interpreter() {
    for block in [64, 80, 100] {
        for (n, skip) in [(1000, -1), (1000, 3), (2 * block as i32 - 9, -1), (37, 0)] {
            let want = load_groups(Backend::Interp, None, block, n, skip);
            assert!(want.iter().any(|v| *v != -1.0));
            for width in [Some(32), Some(16), Some(8)] {
                let got = load_groups(Backend::Cpu, width, block, n, skip);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "block {block} n {n} skip {skip} width {width:?}:\n{got:?}\n{want:?}"
                );
            }
        }
    }
}
