//! Shared-memory accesses at positions known from the lane (the steps of a
//! sorting network): the compiled backend reads and writes
//! them as one window of shared memory, shuffled, and masked stores as a
//! masked vector store (AVX-512) or a read, a blend and a plain store. Both backends must give what the
//! network computes here, for full and partial warps and every warp width.

use warpfold::{Arg, Backend, Device};

const N: usize = 256;

/// The network of `kernels/shared_windows.cu` for `threads` threads.
fn expected(input: &[u32], threads: usize) -> (Vec<u32>, Vec<u64>) {
    let mut s = input.to_vec();
    let mut d: Vec<u64> = (0..N)
        .map(|i| u64::from(input[i]) << 20 | i as u64)
        .collect();
    for stride in [1, 2] {
        let pairs: Vec<(usize, usize)> = (0..threads)
            .map(|t| {
                let pos = 2 * t - (t & (stride - 1));
                (pos, pos + stride)
            })
            .collect();
        for &(p, q) in &pairs {
            if s[p] > s[q] {
                s.swap(p, q);
            }
        }
        for &(p, q) in &pairs {
            if (d[p] ^ d[q]) & 0x10_0000 != 0 {
                d.swap(p, q);
            }
        }
    }
    (s, d)
}

#[test]
fn known_position_exchanges_in_shared_memory_match_the_network() {
    let input: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    // Full warps, a partial last warp, and blocks of whole and half warps.
    for threads in [64u32, 48, 128, 40, 16] {
        let want = expected(&input, threads as usize);
        for (backend, width) in [
            (Backend::Cpu, None),
            (Backend::Cpu, Some(16)),
            (Backend::Cpu, Some(8)),
            (Backend::Interp, None),
        ] {
            let dev = Device::new().with_backend(backend).with_warp_width(width);
            let m = dev
                .load_ptx_named(
                    include_str!("kernels/shared_windows.ptx"),
                    "shared_windows.ptx",
                )
                .expect("loads");
            let k = m.kernel("exchange").unwrap();
            let block = [threads, 1, 1];
            assert_eq!(k.effective_backend(block).0, backend, "{threads} threads");
            let din = dev.buffer_from(&input).unwrap();
            let (o32, o64) = (
                dev.buffer_zeroed(N * 4).unwrap(),
                dev.buffer_zeroed(N * 8).unwrap(),
            );
            k.launch(
                [1, 1, 1],
                block,
                0,
                &[Arg::Buffer(&din), Arg::Buffer(&o32), Arg::Buffer(&o64)],
            )
            .unwrap();
            let what = format!("{backend:?} width {width:?}, {threads} threads");
            assert_eq!(o32.to_vec::<u32>().unwrap(), want.0, "{what}: 32-bit");
            assert_eq!(o64.to_vec::<u64>().unwrap(), want.1, "{what}: 64-bit");
            if backend == Backend::Cpu && width.is_none() && threads % 32 == 0 {
                // The 32-bit windows (64 words at 32 lanes) are stored
                // masked with AVX-512 and blended into a plain store
                // without it (see `lower::scatter_window`).
                let c = k.compiled(block);
                let ir = &c.as_ref().as_ref().unwrap().llvm_ir;
                let masked = ir.contains("call void @llvm.masked.store.v64i32");
                assert_eq!(masked, ir.contains("+avx512f"), "{what}");
            }
        }
    }
}
