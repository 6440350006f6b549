//! Float atomic adds give what the GPU's do, bit for bit, on both
//! backends: `atom.add.f32` flushes subnormal inputs and results to
//! sign-preserving zero and makes every NaN the canonical `0x7fffffff`;
//! `atom.add.f64` keeps subnormals, returns a NaN operand made quiet (the
//! old value's first) and makes an invalid sum the canonical NaN. The CPU's
//! own NaN (`0xffc00000` for infinity minus infinity) must not leak into
//! memory: a random kernel found the compiled backend's shared atomic
//! leaving it there while the interpreter's left the canonical one.

use warpfold::{Arg, Backend, Device};

/// Each thread adds `in[32 + t]` to a shared and a global word holding
/// `in[t]`; it writes the old value, the shared word after its add, and
/// the old global value.
const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry fadd32(.param .u64 po, .param .u64 pg, .param .u64 pin)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<6>;
  .shared .align 4 .b8 sh[128];
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pg];
  ld.param.u64 %rd2, [pin];
  mul.wide.u32 %rd3, %r0, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f0, [%rd4];
  ld.global.f32 %f1, [%rd4+128];
  mov.u64 %rd5, sh;
  add.s64 %rd6, %rd5, %rd3;
  st.shared.f32 [%rd6], %f0;
  atom.shared.add.f32 %f2, [%rd6], %f1;
  ld.shared.f32 %f3, [%rd6];
  add.s64 %rd7, %rd1, %rd3;
  atom.global.add.f32 %f4, [%rd7], %f1;
  mul.wide.u32 %rd8, %r0, 12;
  add.s64 %rd9, %rd0, %rd8;
  st.global.f32 [%rd9], %f2;
  st.global.f32 [%rd9+4], %f3;
  st.global.f32 [%rd9+8], %f4;
  ret;
}
.visible .entry fadd64(.param .u64 po, .param .u64 pg, .param .u64 pin)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<10>;
  .reg .f64 %d<6>;
  .shared .align 8 .b8 sh[256];
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [po];
  ld.param.u64 %rd1, [pg];
  ld.param.u64 %rd2, [pin];
  mul.wide.u32 %rd3, %r0, 8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f64 %d0, [%rd4];
  ld.global.f64 %d1, [%rd4+256];
  mov.u64 %rd5, sh;
  add.s64 %rd6, %rd5, %rd3;
  st.shared.f64 [%rd6], %d0;
  atom.shared.add.f64 %d2, [%rd6], %d1;
  ld.shared.f64 %d3, [%rd6];
  add.s64 %rd7, %rd1, %rd3;
  atom.global.add.f64 %d4, [%rd7], %d1;
  mul.wide.u32 %rd8, %r0, 24;
  add.s64 %rd9, %rd0, %rd8;
  st.global.f64 [%rd9], %d2;
  st.global.f64 [%rd9+8], %d3;
  st.global.f64 [%rd9+16], %d4;
  ret;
}
"#;

const RUNS: [(Backend, Option<u32>); 4] = [
    (Backend::Interp, None),
    (Backend::Cpu, None),
    (Backend::Cpu, Some(16)),
    (Backend::Cpu, Some(8)),
];

/// (old, addend, sum) as bit patterns; the other lanes add small numbers.
const CASES_32: [(u32, u32, u32); 8] = [
    // infinity minus infinity: the canonical NaN, not the CPU's
    (0x7f80_0000, 0xff80_0000, 0x7fff_ffff),
    // a NaN with a payload, either side: the canonical NaN
    (0x7fc0_1234, 0x3f80_0000, 0x7fff_ffff),
    (0x3f80_0000, 0xffc0_0000, 0x7fff_ffff),
    // subnormal inputs flush to signed zero: -0 + -0 = -0
    (0x8000_0001, 0x8000_0000, 0x8000_0000),
    (0x0000_0001, 0x3f80_0000, 0x3f80_0000),
    // a subnormal sum flushes: 2^-125 - 1.5 * 2^-126 = 2^-127
    (0x0100_0000, 0x80c0_0000, 0x0000_0000),
    // ordinary: 1.5 + 2.25 = 3.75
    (0x3fc0_0000, 0x4010_0000, 0x4070_0000),
    (0xc000_0000, 0x4000_0000, 0x0000_0000),
];

const CASES_64: [(u64, u64, u64); 6] = [
    // infinity minus infinity: the canonical NaN
    (
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7fff_ffff_ffff_ffff,
    ),
    // a signalling NaN in memory comes back quiet, payload kept
    (
        0x7ff0_0000_0000_0001,
        0x3ff0_0000_0000_0000,
        0x7ff8_0000_0000_0001,
    ),
    // the addend's NaN when the old value is not one
    (
        0x3ff0_0000_0000_0000,
        0xfff8_0000_0000_0002,
        0xfff8_0000_0000_0002,
    ),
    // two NaNs: the old value's
    (
        0x7ff8_0000_0000_0003,
        0xfff8_0000_0000_0004,
        0x7ff8_0000_0000_0003,
    ),
    // subnormals stay: 1 + 1 (in units of the smallest subnormal) = 2
    (
        0x0000_0000_0000_0001,
        0x0000_0000_0000_0001,
        0x0000_0000_0000_0002,
    ),
    // ordinary: 1.5 + 2.25 = 3.75
    (
        0x3ff8_0000_0000_0000,
        0x4002_0000_0000_0000,
        0x400e_0000_0000_0000,
    ),
];

/// The lanes' (old, addend, sum): `cases` first, then `other(lane)`.
fn lanes<T: Copy>(cases: &[(T, T, T)], other: impl Fn(usize) -> (T, T, T)) -> Vec<(T, T, T)> {
    (0..32)
        .map(|t| cases.get(t).copied().unwrap_or_else(|| other(t)))
        .collect()
}

/// Runs `kernel` on one warp of 32 lanes with `lanes`' old values and
/// addends, on every backend and width; checks each lane's old value, the
/// shared word after its add, the old global value and the global sums.
fn check_adds<T>(kernel: &str, lanes: &[(T, T, T)])
where
    T: bytemuck::Pod + PartialEq + std::fmt::Debug,
{
    let n = lanes.len();
    let old: Vec<T> = lanes.iter().map(|l| l.0).collect();
    let input: Vec<T> = old
        .iter()
        .copied()
        .chain(lanes.iter().map(|l| l.1))
        .collect();
    let want_sum: Vec<T> = lanes.iter().map(|l| l.2).collect();
    for (backend, width) in RUNS {
        let dev = Device::new().with_backend(backend).with_warp_width(width);
        let m = dev.load_ptx_named(PTX, "float_atomics.ptx").expect("loads");
        let k = m.kernel(kernel).unwrap();
        assert_eq!(k.effective_backend([32, 1, 1]).0, backend);
        let out = dev.buffer_zeroed(n * 3 * std::mem::size_of::<T>()).unwrap();
        let g = dev.buffer_from(&old).unwrap();
        let inp = dev.buffer_from(&input).unwrap();
        k.launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Buffer(&out), Arg::Buffer(&g), Arg::Buffer(&inp)],
        )
        .unwrap();
        let o = out.to_vec::<T>().unwrap();
        let what = format!("{backend:?} {width:?}");
        for t in 0..n {
            let got = [o[3 * t], o[3 * t + 1], o[3 * t + 2]];
            let want = [old[t], want_sum[t], old[t]];
            assert_eq!(got, want, "{what}, lane {t}: old, shared sum, old global");
        }
        assert_eq!(g.to_vec::<T>().unwrap(), want_sum, "{what}: global sums");
    }
}

#[test]
fn f32_atomic_adds_flush_and_make_nans_canonical() {
    let lanes = lanes(&CASES_32, |t| {
        let (a, b) = (t as f32, 0.5f32);
        (a.to_bits(), b.to_bits(), (a + b).to_bits())
    });
    check_adds("fadd32", &lanes);
}

#[test]
fn f64_atomic_adds_keep_subnormals_and_propagate_nans() {
    let lanes = lanes(&CASES_64, |t| {
        let (a, b) = (t as f64, 0.25f64);
        (a.to_bits(), b.to_bits(), (a + b).to_bits())
    });
    check_adds("fadd64", &lanes);
}
