//! Load a PTX kernel, run it on the CPU, read the result back.
//!
//! `cargo run --release -p warpfold --example saxpy`

use warpfold::{Arg, Device};

fn main() -> Result<(), warpfold::Error> {
    let ptx = include_str!("../../../examples/saxpy/saxpy.ptx");
    let dev = Device::new();
    let module = dev.load_ptx_named(ptx, "saxpy.ptx")?;
    let kernel = module.kernel("saxpy")?;
    println!("kernel {}", kernel.signature());

    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y = vec![1.0f32; n];
    let dx = dev.buffer_from(&x)?;
    let dy = dev.buffer_from(&y)?;

    let block = 256u32;
    let grid = (n as u32).div_ceil(block);
    kernel.launch(
        [grid, 1, 1],
        [block, 1, 1],
        0,
        &[
            Arg::I32(n as i32),
            Arg::F32(2.0),
            Arg::Buffer(&dx),
            Arg::Buffer(&dy),
        ],
    )?;

    let out: Vec<f32> = dy.to_vec()?;
    for i in [0, 1, 2, 999] {
        println!("y[{i}] = {} (expected {})", out[i], 2.0 * x[i] + 1.0);
    }
    assert!(out.iter().zip(&x).all(|(o, x)| *o == 2.0 * x + 1.0));
    println!("all {n} results correct");
    Ok(())
}
