//! What the small semantics tests share: a kernel run as one CTA of 32
//! threads on a given backend and warp width.

// (each test file compiles its own copy and uses part of it)
#![allow(dead_code)]

use warpfold::{Arg, Backend, Device};

/// Kernel `name` of `ptx` launched once as one CTA of 32 threads on
/// `backend` at `width` lanes (checked to run there, not on a fallback),
/// with arguments a zeroed output of `out_bytes` and then a buffer of each
/// of `inputs`: the output's bytes. Compiled afresh (no disk cache).
pub fn one_cta(
    ptx: &str,
    name: &str,
    backend: Backend,
    width: Option<u32>,
    inputs: &[&[u8]],
    out_bytes: usize,
) -> Vec<u8> {
    let dev = device(backend, width);
    let k = checked_kernel(&dev, ptx, name, [32, 1, 1]);
    let out = dev.buffer_zeroed(out_bytes).unwrap();
    let bufs: Vec<_> = inputs.iter().map(|b| dev.buffer_from(b).unwrap()).collect();
    let args: Vec<Arg> = std::iter::once(&out)
        .chain(&bufs)
        .map(Arg::Buffer)
        .collect();
    k.launch([1, 1, 1], [32, 1, 1], 0, &args).unwrap();
    out.to_bytes()
}

/// A device on `backend` at `width` lanes that compiles afresh (no disk
/// cache).
pub fn device(backend: Backend, width: Option<u32>) -> Device {
    Device::new()
        .with_backend(backend)
        .with_warp_width(width)
        .with_disk_cache(None)
}

/// Kernel `name` of `ptx` loaded on `dev`, checked to run on `dev`'s
/// backend for blocks of `block` threads (not on a fallback).
pub fn checked_kernel(dev: &Device, ptx: &str, name: &str, block: [u32; 3]) -> warpfold::Kernel {
    let m = dev.load_ptx_named(ptx, &format!("{name}.ptx")).unwrap();
    let k = m.kernel(name).unwrap();
    let (used, why) = k.effective_backend(block);
    assert_eq!(used, dev.backend(), "{name} {block:?}: {why:?}");
    k
}

/// The interpreter, and compiled code at 32, 16 and 8 lanes a warp.
pub const BACKENDS: [(Backend, Option<u32>); 4] = [
    (Backend::Interp, None),
    (Backend::Cpu, Some(32)),
    (Backend::Cpu, Some(16)),
    (Backend::Cpu, Some(8)),
];

/// `bytes` as little-endian 32-bit words.
pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// `n` float keys in a scrambled order, no two alike (for sorts).
pub fn scrambled_keys(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32 - 1e6)
        .collect()
}

/// This process's value of the environment variable `var`; without one,
/// first runs test `name` again with each of `values` (see
/// `run_again_with`).
pub fn knob_or_run_again(name: &str, var: &str, values: &[&str]) -> Option<String> {
    let knob = std::env::var(var).ok();
    if knob.is_none() {
        run_again_with(name, var, values);
    }
    knob
}

/// Runs test `name` again in a process of its own for each value of the
/// environment variable `var` (compilation reads such knobs once per
/// process), with the disk cache off; each run must pass.
pub fn run_again_with(name: &str, var: &str, values: &[&str]) {
    for value in values {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name])
            .env(var, value)
            .env("WARPFOLD_CACHE_DIR", "off")
            .status()
            .unwrap();
        assert!(status.success(), "with {var}={value}");
    }
}

/// Whether this is an Intel CPU (CPUID vendor `GenuineIntel`).
pub fn intel_host() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let r = std::arch::x86_64::__cpuid(0);
        let words = [r.ebx, r.edx, r.ecx];
        let vendor: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        vendor == b"GenuineIntel"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}
