//! Named barriers with thread counts and `bar.arrive` (producer/consumer
//! warps): the compiled backend counts arrivals per barrier id and must
//! agree with the interpreter, with one worker and with all cores.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(
        include_str!("kernels/named_barriers.ptx"),
        "named_barriers.ptx",
    )
    .expect("loads")
}

#[test]
fn producer_and_consumer_warps_take_turns_through_named_barriers() {
    let (blocks, rounds) = (5u32, 7i32);
    let n = (blocks as i32 * rounds * 32) as usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
    let expect: Vec<i32> = (0..n)
        .map(|i| {
            let (b, r, lane) = (
                i / (rounds as usize * 32),
                (i / 32) % rounds as usize,
                i % 32,
            );
            let src = b * rounds as usize * 32 + r * 32 + (lane + r) % 32;
            input[src] * 3 + r as i32
        })
        .collect();
    for backend in [Backend::Cpu, Backend::Interp] {
        for threads in [1, 0] {
            let dev = Device::new().with_backend(backend).with_threads(threads);
            let m = module(&dev);
            let k = m.kernel("produce_consume").unwrap();
            assert_eq!(k.effective_backend([96, 1, 1]), (backend, None));
            let din = dev.buffer_from(&input).unwrap();
            let out = dev.buffer_zeroed(n * 4).unwrap();
            k.launch(
                [blocks, 1, 1],
                [96, 1, 1],
                0,
                &[Arg::Buffer(&din), Arg::Buffer(&out), Arg::I32(rounds)],
            )
            .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
            assert_eq!(
                out.to_vec::<i32>().unwrap(),
                expect,
                "{backend:?} threads {threads}"
            );
        }
    }
}

#[test]
fn a_counted_barrier_that_never_fills_is_a_deadlock() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        let e = m
            .kernel("lonely_barrier")
            .unwrap()
            .launch([2, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("lonely_barrier") && e.contains("no thread can continue"),
            "{backend:?}: {e}"
        );
    }
}

#[test]
fn a_barrier_id_out_of_range_is_reported() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        let e = m
            .kernel("barrier_id_out_of_range")
            .unwrap()
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("out of range"), "{backend:?}: {e}");
    }
}

#[test]
fn full_warps_started_in_their_own_function_run_on_past_an_arrival() {
    let blocks = 3u32;
    let input: Vec<i32> = (0..blocks as i32 * 32).map(|i| i * 11 - 40).collect();
    let expect: Vec<i32> = (0..blocks as usize * 64)
        .map(|i| {
            let (b, t) = (i / 64, i % 64);
            if t < 32 {
                -1
            } else {
                input[b * 32 + 31 - (t - 32)] * 5 + 1
            }
        })
        .collect();
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let k = m.kernel("arrive_once").unwrap();
        // Compiled, not left to the interpreter for bad generated code.
        assert_eq!(k.effective_backend([64, 1, 1]), (backend, None));
        let din = dev.buffer_from(&input).unwrap();
        let out = dev.buffer_zeroed(blocks as usize * 64 * 4).unwrap();
        k.launch(
            [blocks, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Buffer(&din), Arg::Buffer(&out)],
        )
        .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
        assert_eq!(out.to_vec::<i32>().unwrap(), expect, "{backend:?}");
    }
}
