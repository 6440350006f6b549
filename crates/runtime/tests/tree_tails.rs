//! The last steps of tree reductions after barriers, where a few of the
//! first lanes run (prefixes and not): the compiled backend, which reads
//! just those lanes' elements there (the first 4 without AVX-512, up to 16
//! with it, where it also stores them with plain narrow stores, blended
//! with the elements of the lanes off), must give the host model's and the
//! interpreter's sums at every warp width.

use warpfold::{Arg, Backend, Device};

/// The kernel on the host: steps in order, each reading before writing.
fn expected(input: &[i32], picks: [i32; 3]) -> Vec<i32> {
    let mut out = Vec::new();
    for block in input.chunks(64) {
        let mut s = block.to_vec();
        let mut step = |active: &dyn Fn(usize) -> bool, d: usize| {
            let old = s.clone();
            for t in 0..64 {
                if active(t) {
                    s[t] = old[t].wrapping_add(old[t + d]);
                }
            }
        };
        step(&|t| t < 32, 32);
        step(&|t| t < 16, 16);
        step(&|t| t < 8, 8);
        step(&|t| t < 4 && (picks[0] >> t) & 1 != 0, 4);
        step(&|t| t < 2 && (picks[1] >> t) & 1 != 0, 2);
        step(&|t| t < 1 && picks[2] & 1 != 0, 1);
        out.extend(s);
    }
    out
}

/// The runs each test compares: the interpreter, and the compiled backend
/// at its own warp width and at 16 and 8 lanes.
const RUNS: [(Backend, Option<u32>); 4] = [
    (Backend::Interp, None),
    (Backend::Cpu, None),
    (Backend::Cpu, Some(16)),
    (Backend::Cpu, Some(8)),
];

/// Kernel `name` of `kernels/tree_tails.ptx` over two CTAs of 64 threads
/// on `input`, with `picks` as its scalar arguments (`.u32` with
/// `unsigned`, else `.s32`): the output, and the compiled kernel's LLVM IR
/// on the compiled backend.
fn run(
    name: &str,
    input: &[i32],
    (picks, unsigned): (&[u32], bool),
    backend: Backend,
    width: Option<u32>,
) -> (Vec<i32>, Option<String>) {
    let dev = Device::new().with_backend(backend).with_warp_width(width);
    let m = dev
        .load_ptx_named(include_str!("kernels/tree_tails.ptx"), "tree_tails.ptx")
        .expect("loads");
    let k = m.kernel(name).unwrap();
    assert_eq!(k.effective_backend([64, 1, 1]).0, backend);
    let a = dev.buffer_from(input).unwrap();
    let out = dev.buffer_zeroed(input.len() * 4).unwrap();
    let mut args = vec![Arg::Buffer(&a), Arg::Buffer(&out)];
    args.extend(picks.iter().map(|&p| {
        if unsigned {
            Arg::U32(p)
        } else {
            Arg::I32(p as i32)
        }
    }));
    k.launch([2, 1, 1], [64, 1, 1], 0, &args).unwrap();
    let ir = (backend == Backend::Cpu).then(|| {
        let c = k.compiled([64, 1, 1]);
        c.as_ref().as_ref().unwrap().llvm_ir.clone()
    });
    (out.to_vec::<i32>().unwrap(), ir)
}

#[test]
fn few_lanes_of_a_tree_reductions_last_steps_read_what_the_step_before_stored() {
    let input: Vec<i32> = (0..128).map(|i| (i * 7919 % 1000) - 500).collect();
    for picks in [
        [0b1111, 0b11, 1],
        [0b0001, 0b01, 1],
        [0b0010, 0b10, 0],
        [0b0100, 0b11, 1],
        [0b1000, 0b00, 1],
        [0b0101, 0b10, 1],
        [0b1010, 0b01, 0],
        [0, 0, 0],
    ] {
        let want = expected(&input, picks);
        for (backend, width) in RUNS {
            let args = picks.map(|p| p as u32);
            let (got, _) = run("tree_tail", &input, (&args, false), backend, width);
            assert_eq!(got, want, "{backend:?} {width:?} {picks:?}");
        }
    }
}

/// `tree_picks` on the host: steps of 16, 8, 4, 2 and 1, thread t < d of
/// a step adding when bit t of its pick is set.
fn expected_picks(input: &[i32], picks: [u32; 5]) -> Vec<i32> {
    let mut out = Vec::new();
    for block in input.chunks(64) {
        let mut s = block.to_vec();
        for (d, pick) in [16usize, 8, 4, 2, 1].into_iter().zip(picks) {
            let old = s.clone();
            for t in (0..d).filter(|t| (pick >> t) & 1 != 0) {
                s[t] = old[t].wrapping_add(old[t + d]);
            }
        }
        out.extend(s);
    }
    out
}

#[test]
fn steps_of_up_to_sixteen_lanes_store_and_reload_the_lanes_that_run() {
    let input: Vec<i32> = (0..128).map(|i| (i * 104_729 % 2001) - 1000).collect();
    let all = [0xffff, 0xff, 0xf, 0x3, 0x1];
    let picks = [
        all,
        // Gaps inside each step's lanes: the narrow stores blend.
        [0x8001, 0x81, 0x9, 0x2, 0x1],
        [0x7ffe, 0x7e, 0x6, 0x1, 0x0],
        [0x00ff, 0x0f, 0x3, 0x3, 0x1],
        [0x5555, 0xaa, 0x5, 0x2, 0x1],
        [0x8000, 0x80, 0x8, 0x2, 0x0],
        [0, 0, 0, 0, 0],
    ];
    for picks in picks {
        let want = expected_picks(&input, picks);
        for (backend, width) in RUNS {
            let (got, ir) = run("tree_picks", &input, (&picks, true), backend, width);
            assert_eq!(got, want, "{backend:?} {width:?} {picks:x?}");
            // Where the code has 32 lanes of AVX-512, the steps take the
            // narrow stores.
            if let (Some(ir), None) = (ir, width) {
                let avx512 = std::is_x86_feature_detected!("avx512f")
                    && std::env::var("WARPFOLD_CPU").is_err();
                assert_eq!(ir.contains("@wf_st_few_32"), avx512, "narrow stores");
            }
        }
    }
}
