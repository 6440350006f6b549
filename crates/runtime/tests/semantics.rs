//! Behaviour a GPU programmer relies on, beyond single results: printf and
//! assert, the watchdog, forward progress (locks within a warp, spinning
//! across warps), lock-step warp-synchronous code, and clear errors for
//! undefined barrier and shuffle use and for out-of-bounds reads.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/semantics.ptx"), "semantics.ptx")
        .expect("loads")
}

#[test]
fn printf_and_assert() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let buf = Arc::new(Mutex::new(String::new()));
        let dev = Device::new()
            .with_backend(backend)
            .with_printf_buffer(buf.clone());
        let m = module(&dev);
        let k = m.kernel("print_and_assert").unwrap();
        // The compiled backend runs printf and assert itself.
        assert_eq!(k.effective_backend([4, 1, 1]).0, backend);
        let a = dev.buffer_from(&[5i32, 6, 7, 8]).unwrap();
        k.launch([1, 1, 1], [4, 1, 1], 0, &[Arg::Buffer(&a), Arg::I32(2)])
            .unwrap();
        assert_eq!(
            buf.lock().unwrap().as_str(),
            "t=0 a=5 half=2.5\nt=1 a=6 half=3.0\n"
        );

        let bad = dev.buffer_from(&[1i32, 2, -3, 4]).unwrap();
        let e = k
            .launch([1, 1, 1], [4, 1, 1], 0, &[Arg::Buffer(&bad), Arg::I32(0)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("assertion `a[t] >= 0` failed")
                && e.contains("thread (2,0,0)")
                && e.contains("print_and_assert"),
            "{e}"
        );
    }
}

#[test]
fn watchdog_stops_a_runaway_kernel() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new()
            .with_backend(backend)
            .with_timeout(Some(Duration::from_millis(300)));
        let m = module(&dev);
        let flag = dev.buffer_from(&[0i32]).unwrap();
        let t0 = Instant::now();
        let e = m
            .kernel("spin_forever")
            .unwrap()
            .launch([4, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&flag)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("time limit") && e.contains("spin_forever"),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(20));
    }
}

#[test]
fn watchdog_stops_runaway_grid_stride_loops() {
    // Compiled grid-stride loops where no warp waits read the watchdog's
    // flag only when their budget runs out (`Gen::poll`, lazy); with a
    // barrier in the loop they read it every trip. A launch that never
    // returns fails here after 60 s instead of hanging the test run.
    for (name, lazy) in [("stride_forever", true), ("stride_forever_bar", false)] {
        for backend in [Backend::Cpu, Backend::Interp] {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let dev = Device::new()
                    .with_backend(backend)
                    .with_timeout(Some(Duration::from_millis(300)));
                let m = module(&dev);
                let data = dev.buffer_from(&[0i32; 64]).unwrap();
                let k = m.kernel(name).unwrap();
                let e = k
                    .launch([4, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&data)])
                    .unwrap_err()
                    .to_string();
                let ir = (backend == Backend::Cpu).then(|| {
                    let c = k.compiled([64, 1, 1]);
                    c.as_ref().as_ref().expect("compiled").llvm_ir.clone()
                });
                let _ = tx.send((e, ir));
            });
            let (e, ir) = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{name} on {backend:?}: the watchdog did not stop it"));
            assert!(e.contains("time limit") && e.contains(name), "{e}");
            if let Some(ir) = ir {
                assert_eq!(ir.contains("\nspent"), lazy, "{name}: the loop's lazy poll");
            }
        }
    }
}

#[test]
fn lanes_of_one_warp_can_take_a_lock_in_turn() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new()
            .with_backend(backend)
            .with_timeout(Some(Duration::from_secs(60)));
        let m = module(&dev);
        let lock = dev.buffer_from(&[0i32]).unwrap();
        let counter = dev.buffer_from(&[0i32]).unwrap();
        m.kernel("warp_lock")
            .unwrap()
            .launch(
                [3, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&lock), Arg::Buffer(&counter)],
            )
            .unwrap();
        assert_eq!(counter.to_vec::<i32>().unwrap(), vec![3 * 64]);
        // Losers spinning before the winner's critical section: the scheduler
        // must let the winner run although it is further along.
        let counter = dev.buffer_from(&[0i32]).unwrap();
        m.kernel("warp_spin_lock")
            .unwrap()
            .launch(
                [3, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&lock), Arg::Buffer(&counter)],
            )
            .unwrap();
        assert_eq!(counter.to_vec::<i32>().unwrap(), vec![3 * 64]);
    }
}

#[test]
fn a_warp_can_wait_for_another_through_shared_memory() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new()
            .with_backend(backend)
            .with_timeout(Some(Duration::from_secs(60)));
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        m.kernel("cross_warp_flag")
            .unwrap()
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let v: Vec<i32> = out.to_vec().unwrap();
        assert!(v[..32].iter().all(|&x| x == 7), "{v:?}");
    }
}

#[test]
fn legacy_warp_synchronous_reduction_works_in_lock_step() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let input: Vec<i32> = (1..=64).collect();
        let a = dev.buffer_from(&input).unwrap();
        let out = dev.buffer_zeroed(4).unwrap();
        m.kernel("legacy_warp_reduce")
            .unwrap()
            .launch(
                [1, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&a), Arg::Buffer(&out)],
            )
            .unwrap();
        assert_eq!(out.to_vec::<i32>().unwrap(), vec![64 * 65 / 2]);
    }
}

#[test]
fn barriers_at_different_places_are_reported() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        let e = m
            .kernel("split_barrier")
            .unwrap()
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("different barriers") && e.contains("split_barrier"),
            "{e}"
        );
    }
}

#[test]
fn a_lane_outside_its_shuffle_mask_is_reported() {
    // A checking-mode diagnosis: the interpreter.
    let dev = Device::new().with_backend(Backend::Interp);
    let m = module(&dev);
    let out = dev.buffer_zeroed(32 * 4).unwrap();
    let e = m
        .kernel("bad_mask")
        .unwrap()
        .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("member mask") && e.contains("lane 1"), "{e}");
}

#[test]
fn out_of_bounds_names_block_thread_line_and_address_and_host_stays_intact() {
    let dev = Device::new().with_threads(1).with_backend(Backend::Interp);
    let m = module(&dev);
    let input = dev.buffer_from(&vec![1.0f32; 256]).unwrap();
    let out = dev.buffer_zeroed(256 * 4).unwrap();
    let e = m
        .kernel("oob_in_last_block")
        .unwrap()
        .launch(
            [4, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::I32(256)],
        )
        .unwrap_err();
    let msg = e.to_string();
    let want_addr = format!("{:#x}", input.device_ptr() + 256 * 4);
    assert!(
        msg.contains("out of bounds global load")
            && msg.contains("block (3,0,0)")
            && msg.contains("thread (63,0,0)")
            && msg.contains(&want_addr)
            && msg.contains("PTX line"),
        "{msg}"
    );
    // The input is untouched.
    assert!(input.to_vec::<f32>().unwrap().iter().all(|&x| x == 1.0));
}

#[test]
fn float_registers_keep_loaded_nan_payloads_and_arithmetic_canonicalises() {
    let input: Vec<u32> = vec![0x7fc0_1234, 0xffff_ffdf, 0x7f80_0001, 0x3f80_0000];
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let a = dev.buffer_from(&input).unwrap();
        let out = dev.buffer_zeroed(32).unwrap();
        m.kernel("nan_payloads")
            .unwrap()
            .launch(
                [1, 1, 1],
                [4, 1, 1],
                0,
                &[Arg::Buffer(&a), Arg::Buffer(&out), Arg::U32(4)],
            )
            .unwrap();
        let got: Vec<u32> = out.to_vec().unwrap();
        assert_eq!(&got[..4], &input[..], "{backend:?}: copies keep the bits");
        assert_eq!(
            &got[4..],
            &[0x7fff_ffff, 0x7fff_ffff, 0x7fff_ffff, 0x3f80_0000],
            "{backend:?}: arithmetic gives the canonical NaN"
        );
    }
}

#[test]
fn lanes_reconverge_after_a_loop_with_different_trip_counts() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        m.kernel("reconverge_after_loop")
            .unwrap()
            .launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let got: Vec<u32> = out.to_vec().unwrap();
        let want: Vec<u32> = (0..32).map(|i| if i == 0 { 0 } else { 99 + i }).collect();
        assert_eq!(got, want, "{backend:?}");
    }
}

#[test]
fn a_call_through_a_bad_function_pointer_stops_the_launch() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = dev
            .load_ptx(include_str!("kernels/bad_function_pointer.ptx"))
            .unwrap();
        let k = m.kernel("bad_function_pointer").unwrap();
        // The compiled backend calls through pointers itself.
        assert_eq!(k.effective_backend([32, 1, 1]), (backend, None));
        let out = dev.buffer_zeroed(32 * 4).unwrap();
        k.launch([1, 1, 1], [32, 1, 1], 0, &[Arg::Buffer(&out), Arg::U64(0)])
            .unwrap_err();
        let e = k
            .launch(
                [1, 1, 1],
                [32, 1, 1],
                0,
                &[Arg::Buffer(&out), Arg::U64(12345)],
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bad_function_pointer")
                && e.contains("thread (5,0,0)")
                && e.contains("not the address of a device function"),
            "{backend:?}: {e}"
        );
        // A good pointer in every lane: the table's function.
        let ok = dev.buffer_zeroed(32 * 4).unwrap();
        k.launch([1, 1, 1], [5, 1, 1], 0, &[Arg::Buffer(&ok), Arg::U64(0)])
            .unwrap();
        let v = ok.to_vec::<i32>().unwrap();
        assert_eq!(&v[..5], &[0, 2, 4, 6, 8], "{backend:?}");
    }
}

#[test]
fn half_comparisons_run_compiled_on_every_instruction_set() {
    // f16 bits: 1.0, -2.0, 65504 (max), a subnormal, -0, +0, inf, NaN.
    let a: Vec<u16> = vec![
        0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x0000, 0x7c00, 0x7e00,
    ];
    let b: Vec<u16> = vec![
        0x4000, 0xc000, 0x7c00, 0x0002, 0x0000, 0x8000, 0x7bff, 0x3c00,
    ];
    let want: Vec<u32> = vec![1, 0, 1, 1, 0, 0, 0, 2];
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let m = module(&dev);
        let k = m.kernel("half_less").unwrap();
        // Compiled also without F16C (`WARPFOLD_CPU=x86-64-v2` in the test
        // script), where the widening is a call into the runtime.
        let (used, why) = k.effective_backend([8, 1, 1]);
        assert_eq!(used, backend, "{why:?}");
        let out = dev.buffer_zeroed(8 * 4).unwrap();
        let (ab, bb) = (dev.buffer_from(&a).unwrap(), dev.buffer_from(&b).unwrap());
        k.launch(
            [1, 1, 1],
            [8, 1, 1],
            0,
            &[Arg::Buffer(&out), Arg::Buffer(&ab), Arg::Buffer(&bb)],
        )
        .unwrap();
        assert_eq!(out.to_vec::<u32>().unwrap(), want, "{backend:?}");
    }
}
