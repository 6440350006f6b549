//! Compiled code with warps narrower than the GPU's (8 or 16 lanes, see
//! `Device::with_warp_width`): kernels that cannot tell compute what the
//! interpreter computes in every block shape, and kernels that observe
//! their warp keep 32 lanes whatever is asked.

use warpfold::{Arg, Backend, Buffer, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/warp_width.ptx"), "warp_width.ptx")
        .expect("loads")
}

/// A device on `backend` whose compiled code asks for `lanes` per warp.
fn device(backend: Backend, lanes: u32) -> Device {
    Device::new()
        .with_backend(backend)
        .with_warp_width(Some(lanes))
        .with_disk_cache(None)
}

/// The lanes per warp of `kernel`'s compiled code for blocks of `block`
/// (which must compile).
fn lanes_of(m: &Module, kernel: &str, block: [u32; 3]) -> u32 {
    match &*m.kernel(kernel).unwrap().compiled(block) {
        Ok(k) => k.warp_lanes(),
        Err(e) => panic!("{kernel} does not compile for {block:?}: {e}"),
    }
}

/// What a kernel asked for `asked` lanes gets in blocks of `threads`: at
/// most 32 warps per CTA.
fn expected_lanes(asked: u32, threads: u32) -> u32 {
    let mut w = asked;
    while w < 32 && threads > 32 * w {
        w *= 2;
    }
    w
}

/// One launch of `kernel`: its buffer arguments' initial bytes, then its
/// scalar arguments.
struct Launch<'a> {
    kernel: &'a str,
    grid: [u32; 3],
    block: [u32; 3],
    buffers: Vec<Vec<u8>>,
    scalars: Vec<Arg<'static>>,
}

/// `l` on `backend` at `lanes` per warp, checking the width the compiled
/// code got: the contents of the buffers afterwards.
fn run(l: &Launch, backend: Backend, lanes: u32) -> Vec<Vec<u8>> {
    let dev = device(backend, lanes);
    let m = module(&dev);
    let k = m.kernel(l.kernel).unwrap();
    let (used, why) = k.effective_backend(l.block);
    assert_eq!(used, backend, "{}: {why:?}", l.kernel);
    if backend == Backend::Cpu {
        let c = k.compiled(l.block);
        let c = c.as_ref().as_ref().unwrap();
        // Blocks narrower than a warp share 32-lane warps when they can.
        let want = if c.ctas_per_warp() > 1 {
            32
        } else {
            expected_lanes(lanes, l.block.iter().product())
        };
        assert_eq!(
            c.warp_lanes(),
            want,
            "{} in blocks of {:?}",
            l.kernel,
            l.block
        );
    }
    launch(&dev, &k, l)
}

/// `l` through kernel `k` of a module on `dev`: the contents of the
/// buffers afterwards (inputs and outputs, in argument order).
fn launch(dev: &Device, k: &warpfold::Kernel, l: &Launch) -> Vec<Vec<u8>> {
    let bufs: Vec<Buffer> = l
        .buffers
        .iter()
        .map(|b| dev.buffer_from(b).unwrap())
        .collect();
    let mut args: Vec<Arg> = bufs.iter().map(Arg::Buffer).collect();
    for s in &l.scalars {
        args.push(match s {
            Arg::I32(v) => Arg::I32(*v),
            Arg::U32(v) => Arg::U32(*v),
            Arg::F32(v) => Arg::F32(*v),
            _ => unreachable!("only the scalars these tests use"),
        });
    }
    k.launch(l.grid, l.block, 0, &args)
        .unwrap_or_else(|e| panic!("{}: {e}", l.kernel));
    bufs.iter().map(|b| b.to_vec::<u8>().unwrap()).collect()
}

fn bytes<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// Every launch gives the same bytes at 8 and 16 lanes as the interpreter.
fn agree(launches: &[Launch]) {
    for l in launches {
        let want = run(l, Backend::Interp, 32);
        for lanes in [8, 16] {
            let got = run(l, Backend::Cpu, lanes);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g == w,
                    "{} in blocks of {:?} at {lanes} lanes: buffer {i} differs from the interpreter's",
                    l.kernel,
                    l.block
                );
            }
        }
    }
}

fn words(n: u32, seed: u32) -> Vec<u32> {
    (0..n)
        .map(|i| (i ^ seed).wrapping_mul(2654435761).rotate_left(7))
        .collect()
}

#[test]
fn thread_indices_agree_in_every_block_shape() {
    let (w, h) = (100u32, 40u32);
    let input: Vec<i32> = words(w * h, 1)
        .into_iter()
        .map(|x| (x >> 8) as i32)
        .collect();
    let launches: Vec<Launch> = [
        [16, 16, 1],
        [4, 8, 1],
        [8, 8, 1],
        [32, 4, 1],
        [100, 1, 1],
        [7, 3, 1],
        [16, 4, 4],
        [24, 10, 1],
        [1, 64, 1],
        [32, 32, 1],
    ]
    .into_iter()
    .map(|block| Launch {
        kernel: "grid2d",
        grid: [w.div_ceil(block[0]), h.div_ceil(block[1]), 1],
        block,
        buffers: vec![bytes(&input), vec![0; (w * h * 4) as usize]],
        scalars: vec![Arg::I32(w as i32), Arg::I32(h as i32)],
    })
    .collect();
    agree(&launches);
}

#[test]
fn barrier_trees_over_many_narrow_warps() {
    let n = 5000u32;
    let input: Vec<f32> = words(n, 2)
        .iter()
        .map(|&x| (x % 1000) as f32 * 0.25)
        .collect();
    let launches: Vec<Launch> = [64u32, 96, 256, 512]
        .into_iter()
        .map(|b| Launch {
            kernel: "tree_sum",
            grid: [n.div_ceil(b), 1, 1],
            block: [b, 1, 1],
            buffers: vec![bytes(&input), vec![0; (n.div_ceil(b) * 4) as usize]],
            scalars: vec![Arg::I32(n as i32)],
        })
        .collect();
    agree(&launches);
}

#[test]
fn reversed_strided_and_colliding_accesses() {
    let n = 1000u32;
    let input: Vec<i32> = words(n, 3).into_iter().map(|x| x as i32).collect();
    let narrow: Vec<i16> = words(3 * n + 2, 4).into_iter().map(|x| x as i16).collect();
    let launches: Vec<Launch> = [[64u32, 1, 1], [100, 1, 1], [256, 1, 1], [32, 2, 1]]
        .into_iter()
        .map(|block| Launch {
            kernel: "shuffled",
            grid: [n.div_ceil(block[0] * block[1]), 1, 1],
            block,
            buffers: vec![
                bytes(&input),
                bytes(&narrow),
                vec![0; (n * 4) as usize],
                vec![0; (n * 4) as usize],
                vec![0; (n.div_ceil(4) * 4) as usize],
            ],
            scalars: vec![Arg::I32(n as i32)],
        })
        .collect();
    agree(&launches);
}

#[test]
fn rows_of_sixteen_words_and_commutative_atomics() {
    let n = 700u32;
    let rows: Vec<f32> = words(16 * n, 5).iter().map(|&x| (x % 97) as f32).collect();
    let values = words(20000, 6);
    let mut launches: Vec<Launch> = [64u32, 128, 100]
        .into_iter()
        .map(|b| Launch {
            kernel: "rows16",
            grid: [n.div_ceil(b), 1, 1],
            block: [b, 1, 1],
            buffers: vec![bytes(&rows), vec![0; (n * 4) as usize]],
            scalars: vec![Arg::I32(n as i32)],
        })
        .collect();
    launches.extend([256u32, 96, 32].into_iter().map(|b| Launch {
        kernel: "histogram",
        grid: [13, 1, 1],
        block: [b, 1, 1],
        buffers: vec![bytes(&values), vec![0; 64 * 4]],
        scalars: vec![Arg::I32(values.len() as i32)],
    }));
    launches.push(Launch {
        kernel: "fma_chains",
        grid: [9, 1, 1],
        block: [128, 1, 1],
        buffers: vec![vec![0; 9 * 128 * 4]],
        scalars: vec![Arg::F32(0.999), Arg::F32(0.001), Arg::I32(1100)],
    });
    agree(&launches);
}

#[test]
fn kernels_that_observe_their_warp_keep_32_lanes() {
    let dev = device(Backend::Cpu, 8);
    let m = module(&dev);
    for kernel in [
        "shuffle_sum",
        "lane_ids",
        "ticket",
        "warp_synchronous",
        "say",
    ] {
        assert_eq!(lanes_of(&m, kernel, [64, 1, 1]), 32, "{kernel}");
    }
    // And they still run compiled, as the interpreter does.
    let input = words(128, 7);
    let launches = [
        Launch {
            kernel: "shuffle_sum",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            buffers: vec![bytes(&input), vec![0; 128 * 4]],
            scalars: vec![],
        },
        Launch {
            kernel: "lane_ids",
            grid: [2, 1, 1],
            block: [48, 1, 1],
            buffers: vec![vec![0; 96 * 4]],
            scalars: vec![],
        },
        Launch {
            kernel: "warp_synchronous",
            grid: [1, 1, 1],
            block: [32, 1, 1],
            buffers: vec![vec![0; 32 * 4], vec![0; 32 * 4]],
            scalars: vec![],
        },
    ];
    for l in &launches {
        let want = run(l, Backend::Interp, 32);
        let dev = device(Backend::Cpu, 8);
        let m = module(&dev);
        assert_eq!(lanes_of(&m, l.kernel, l.block), 32);
        let got = launch(&dev, &m.kernel(l.kernel).unwrap(), l);
        assert_eq!(got, want, "{}", l.kernel);
    }
}

#[test]
fn the_width_asked_for_gives_way_to_large_and_packed_blocks() {
    let dev = device(Backend::Cpu, 8);
    let m = module(&dev);
    // At most 32 warps per CTA.
    assert_eq!(lanes_of(&m, "tree_sum", [256, 1, 1]), 8);
    assert_eq!(lanes_of(&m, "tree_sum", [512, 1, 1]), 16);
    assert_eq!(lanes_of(&m, "tree_sum", [1024, 1, 1]), 32);
    // Blocks narrower than a warp share 32-lane warps.
    let k = m.kernel("grid2d").unwrap();
    let c = k.compiled([4, 2, 1]);
    let c = c.as_ref().as_ref().unwrap();
    assert!(c.ctas_per_warp() > 1);
    assert_eq!(c.warp_lanes(), 32);
    // Asking for 32 gives 32.
    let m32 = module(&device(Backend::Cpu, 32));
    assert_eq!(lanes_of(&m32, "grid2d", [16, 16, 1]), 32);
}
