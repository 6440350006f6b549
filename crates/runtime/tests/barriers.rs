//! Barriers where the compiled backend leaves a warp through its lean exit
//! (a whole warp at a plain barrier) and where it has to hand such a warp
//! to the general protocol: warps at different barriers, warps with exited
//! lanes, and a warp paused in a long loop while the others wait.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/barriers.ptx"), "barriers.ptx")
        .expect("loads")
}

const BACKENDS: [Backend; 2] = [Backend::Cpu, Backend::Interp];

#[test]
fn whole_warps_at_different_barriers_are_reported() {
    for backend in BACKENDS {
        let dev = Device::new().with_backend(backend);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        let e = module(&dev)
            .kernel("warp_split_barrier")
            .unwrap()
            .launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("different barriers"), "{backend:?}: {e}");
    }
}

#[test]
fn a_warp_with_exited_lanes_goes_through_rounds_of_barriers() {
    let expect: Vec<u32> = (0..64)
        .map(|t| {
            if t < 40 {
                (t + 4) % 40 + 4 + 1000 * (t % 4)
            } else {
                0
            }
        })
        .collect();
    for backend in BACKENDS {
        let dev = Device::new().with_backend(backend);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        module(&dev)
            .kernel("partial_warp_rounds")
            .unwrap()
            .launch([2, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(out.to_vec::<u32>().unwrap(), expect, "{backend:?}");
    }
}

#[test]
fn a_warp_paused_in_a_long_loop_joins_the_barrier_later() {
    let n: u32 = 200_000;
    let sum = (0..n).fold(0u32, |a, i| a.wrapping_add(i));
    let expect: Vec<u32> = (0..64u32)
        .map(|t| match t {
            24..=31 => 0,
            0..=23 => sum.wrapping_add(1000 * (t % 4)),
            _ => 1000 * (t % 4),
        })
        .collect();
    for backend in BACKENDS {
        let dev = Device::new().with_backend(backend);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        module(&dev)
            .kernel("late_warp")
            .unwrap()
            .launch([3, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out), Arg::U32(n)])
            .unwrap();
        assert_eq!(out.to_vec::<u32>().unwrap(), expect, "{backend:?}");
    }
}

#[test]
fn a_first_bar_red_and_starts_from_all_true() {
    for backend in BACKENDS {
        let dev = Device::new().with_backend(backend);
        let out = dev.buffer_zeroed(4 * 64 * 4).unwrap();
        module(&dev)
            .kernel("first_bar_red_and")
            .unwrap()
            .launch([4, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        assert_eq!(out.to_vec::<u32>().unwrap(), vec![1; 256], "{backend:?}");
    }
}

#[test]
fn half_warps_wait_at_a_counted_barrier_while_the_rest_loop_on() {
    // Three trips, each adding the word read, plus one between trips.
    let expect: Vec<u32> = (0..64u32)
        .map(|t| {
            let word = if t % 32 < 16 { t ^ 32 } else { t } + 100;
            3 * word + 2
        })
        .collect();
    for (backend, width) in [
        (Backend::Interp, None),
        (Backend::Cpu, Some(32)),
        (Backend::Cpu, Some(16)),
        (Backend::Cpu, Some(8)),
    ] {
        let dev = Device::new()
            .with_backend(backend)
            .with_warp_width(width)
            .with_disk_cache(None);
        let out = dev.buffer_zeroed(64 * 4).unwrap();
        let m = module(&dev);
        let k = m.kernel("half_warp_barrier").unwrap();
        let (used, why) = k.effective_backend([64, 1, 1]);
        assert_eq!(used, backend, "{why:?}");
        k.launch([1, 1, 1], [64, 1, 1], 0, &[Arg::Buffer(&out)])
            .unwrap();
        let got: Vec<u32> = out
            .to_bytes()
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(got, expect, "{backend:?} {width:?}");
    }
}
