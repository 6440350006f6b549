//! Global adds the compiled backend sums per worker and adds to memory at
//! the end of the launch (see the cpu crate's `deferred_red`): the totals
//! must be exact, with one worker and with all cores, and adds a kernel
//! can see (the same buffer passed again) must reach memory at once.

use warpfold::{Arg, Backend, Device, Module};

fn module(dev: &Device) -> Module {
    dev.load_ptx_named(include_str!("kernels/deferred_red.ptx"), "deferred_red.ptx")
        .expect("loads")
}

fn devices() -> Vec<(Device, String)> {
    let mut out = Vec::new();
    for backend in [Backend::Cpu, Backend::Interp] {
        for threads in [1, 0] {
            let dev = Device::new().with_backend(backend).with_threads(threads);
            out.push((dev, format!("{backend:?} threads {threads}")));
        }
    }
    out
}

#[test]
fn a_histogram_in_global_memory_counts_every_element() {
    let n = 40_000usize;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let mut expect = vec![0u32; 65];
    for (i, d) in data.iter().enumerate() {
        expect[(d & 63) as usize] += 1;
        expect[64] = expect[64].wrapping_add(i as u32);
    }
    // 16-thread blocks run two CTAs to a warp (packed).
    for (dev, what) in devices() {
        for block in [128u32, 16] {
            let m = module(&dev);
            let k = m.kernel("hist").unwrap();
            assert_eq!(k.effective_backend([block, 1, 1]).1, None, "{what}");
            let bins = dev.buffer_zeroed(65 * 4).unwrap();
            let din = dev.buffer_from(&data).unwrap();
            let blocks = n.div_ceil(block as usize) as u32;
            // Twice: the copies start from zero on every launch.
            for launch in 1..=2u32 {
                k.launch(
                    [blocks, 1, 1],
                    [block, 1, 1],
                    0,
                    &[Arg::Buffer(&bins), Arg::Buffer(&din), Arg::U32(n as u32)],
                )
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let want: Vec<u32> = expect.iter().map(|c| c.wrapping_mul(launch)).collect();
                let got = bins.to_vec::<u32>().unwrap();
                assert_eq!(got, want, "{what}, block {block}, launch {launch}");
            }
        }
    }
}

#[test]
fn wide_adds_carry_into_the_high_word() {
    for (dev, what) in devices() {
        let m = module(&dev);
        let counters = dev.buffer_from(&[u64::MAX - 5, 0, 1 << 40, 7]).unwrap();
        let v = 0xffff_ffffu64;
        m.kernel("wide")
            .unwrap()
            .launch(
                [3, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Buffer(&counters), Arg::U64(v)],
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        // 3 CTAs x 16 threads per counter.
        let add = 48 * v;
        let want = [
            (u64::MAX - 5).wrapping_add(add),
            add,
            (1u64 << 40) + add,
            7 + add,
        ];
        assert_eq!(counters.to_vec::<u64>().unwrap(), want, "{what}");
    }
}

#[test]
fn adds_another_argument_reads_after_a_barrier_are_in_memory() {
    for (dev, what) in devices() {
        let m = module(&dev);
        let k = m.kernel("visible_after_barrier").unwrap();
        assert_eq!(k.effective_backend([96, 1, 1]).1, None, "{what}");
        // The same buffer as both arguments: thread 0 reads the adds back.
        let both = dev.buffer_zeroed(8).unwrap();
        k.launch(
            [1, 1, 1],
            [96, 1, 1],
            0,
            &[Arg::Buffer(&both), Arg::Buffer(&both)],
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(both.to_vec::<u32>().unwrap(), [96, 96], "{what}");
        // Separate buffers: nothing reads the count, which is exact at
        // the end of the launch.
        let (count, seen) = (dev.buffer_zeroed(4).unwrap(), dev.buffer_zeroed(8).unwrap());
        k.launch(
            [5, 1, 1],
            [96, 1, 1],
            0,
            &[Arg::Buffer(&count), Arg::Buffer(&seen)],
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(count.to_vec::<u32>().unwrap(), [480], "{what}");
        assert_eq!(seen.to_vec::<u32>().unwrap(), [0, 0], "{what}");
    }
}
