//! PTX from the LLVM NVPTX back end (clang's dialect: `LBB0_2` labels,
//! demoted shared variables, `.rn` on every float op) runs correctly.

use warpfold::{Arg, Device};

#[test]
fn llvm_nvptx_block_sum() {
    let dev = Device::new();
    let m = dev
        .load_ptx_named(
            include_str!("kernels/llvm_block_sum.ptx"),
            "llvm_block_sum.ptx",
        )
        .unwrap();
    let k = m.kernel("block_saxpy_sum").unwrap();
    let n = 250usize;
    let x: Vec<f32> = (0..n).map(|i| (i as f32) * 0.25 - 7.0).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 / (1.0 + i as f32)).collect();
    let a = 1.75f32;
    let blocks = n.div_ceil(64);
    let (dx, dy) = (dev.buffer_from(&x).unwrap(), dev.buffer_from(&y).unwrap());
    let out = dev.buffer_zeroed(blocks * 4).unwrap();
    let count = dev.buffer_zeroed(4).unwrap();
    k.launch(
        [blocks as u32, 1, 1],
        [64, 1, 1],
        0,
        &[
            Arg::Buffer(&dx),
            Arg::Buffer(&dy),
            Arg::Buffer(&out),
            Arg::Buffer(&count),
            Arg::F32(a),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    // Reference in the kernel's own order: tile[t] + tile[t+32], then a
    // shuffle-down tree over the first warp.
    let mut want = Vec::new();
    for b in 0..blocks {
        let v: Vec<f32> = (0..64)
            .map(|t| {
                let i = b * 64 + t;
                if i < n {
                    a * x[i] + y[i]
                } else {
                    0.0
                }
            })
            .collect();
        let mut r: Vec<f32> = (0..32).map(|l| v[l] + v[l + 32]).collect();
        for d in [16, 8, 4, 2, 1] {
            r = (0..32)
                .map(|l| {
                    if l + d < 32 {
                        r[l] + r[l + d]
                    } else {
                        r[l] + r[l]
                    }
                })
                .collect();
        }
        want.push(r[0]);
    }
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    assert_eq!(count.to_vec::<i32>().unwrap(), vec![n as i32]);
}
