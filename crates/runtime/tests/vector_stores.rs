//! Vector stores (`st.v2`, `st.v4`) whose threads write consecutive groups
//! of elements (arrays of float4, int2, double2, short4): the compiled
//! backend stores a warp's groups as one interleaved vector. Full and
//! partial warps, threads that store nothing, and 8, 16 and 32 lanes must
//! give the interpreter's results.

use warpfold::{Arg, Backend, Device};

fn ptx() -> &'static str {
    include_str!("kernels/vector_stores.ptx")
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
        .load_ptx_named(ptx(), "vector_stores.ptx")
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
                    .load_ptx_named(ptx(), "vector_stores.ptx")
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
