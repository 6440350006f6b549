//! A `mul` and the `add`/`sub` reading it, both without a rounding
//! modifier, run as one `fma` (one rounding), as ptxas fuses them on a
//! GPU; with `with_fmad(false)` each rounds on its own
//! (crates/ptx/src/lower/contract.rs). Both backends agree bit for bit
//! either way, NaNs included (a fused `c - a * b` negates `a` where only
//! arithmetic reads it).

use warpfold::{Arg, Backend, Device};

const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64

// Per thread: in[3i..3i+3] = a, b, c; out[8i..8i+8] =
// a*b + c, a*b - c, c - a*b (fused), a*b + c with mul.rn (not fused),
// p + c + p with p = a*b read twice (not fused), (-a) * b + c + (-a) with
// the negation read by arithmetic only, and (-a) * b + c and -a with the
// negation stored too (its NaN's bits show).
.visible .entry mads(.param .u64 out_p, .param .u64 in_p)
{
    .reg .f32 %f<24>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out_p];
    ld.param.u64 %rd2, [in_p];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd2, %rd3;
    mul.wide.u32 %rd5, %r1, 32;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+4];
    ld.global.f32 %f3, [%rd4+8];
    mul.f32 %f4, %f1, %f2;
    add.f32 %f5, %f4, %f3;
    st.global.f32 [%rd6], %f5;
    mul.f32 %f6, %f1, %f2;
    sub.f32 %f7, %f6, %f3;
    st.global.f32 [%rd6+4], %f7;
    mul.f32 %f8, %f1, %f2;
    sub.f32 %f9, %f3, %f8;
    st.global.f32 [%rd6+8], %f9;
    mul.rn.f32 %f10, %f1, %f2;
    add.f32 %f11, %f10, %f3;
    st.global.f32 [%rd6+12], %f11;
    mul.f32 %f12, %f1, %f2;
    add.f32 %f13, %f12, %f3;
    add.f32 %f14, %f13, %f12;
    st.global.f32 [%rd6+16], %f14;
    neg.f32 %f15, %f1;
    mul.f32 %f16, %f15, %f2;
    add.f32 %f17, %f16, %f3;
    add.f32 %f18, %f17, %f15;
    st.global.f32 [%rd6+20], %f18;
    neg.f32 %f19, %f1;
    mul.f32 %f20, %f19, %f2;
    add.f32 %f21, %f20, %f3;
    st.global.f32 [%rd6+24], %f21;
    st.global.f32 [%rd6+28], %f19;
    ret;
}
"#;

const THREADS: usize = 64;
const COLS: usize = 8;

/// a, b, c per thread: products that need rounding, one NaN `a`.
fn inputs() -> Vec<f32> {
    let mut v = Vec::new();
    let mut s = 0x9e37_79b9u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    for t in 0..THREADS {
        let a = 1.0 + (next() >> 9) as f32 / (1 << 23) as f32;
        let b = 1.0 + (next() >> 9) as f32 / (1 << 23) as f32;
        // c close to -a*b (even threads) or a*b (odd ones), so sums or
        // differences cancel and show the product's rounding error.
        let sign = if t % 2 == 0 { -1.0 } else { 1.0 };
        let c = sign * (a * b) * (1.0 + ((next() >> 28) as f32 - 8.0) / (1 << 22) as f32);
        v.extend([if t == 5 { f32::NAN } else { a }, b, c]);
    }
    v
}

fn run(backend: Backend, fmad: bool) -> Vec<u32> {
    let dev = Device::new()
        .with_backend(backend)
        .with_disk_cache(None)
        .with_fmad(fmad);
    let m = dev.load_ptx_named(PTX, "fmad.ptx").expect("loads");
    let k = m.kernel("mads").unwrap();
    let input = dev.buffer_from(&inputs()).unwrap();
    let out = dev.buffer_zeroed(THREADS * COLS * 4).unwrap();
    k.launch(
        [1, 1, 1],
        [THREADS as u32, 1, 1],
        0,
        &[Arg::Buffer(&out), Arg::Buffer(&input)],
    )
    .unwrap();
    out.to_vec::<u32>().unwrap()
}

/// The GPU's results: canonical NaN for arithmetic, one rounding where
/// fused.
fn expected(fmad: bool) -> Vec<u32> {
    let canon = |x: f32| if x.is_nan() { 0x7fff_ffff } else { x.to_bits() };
    let mut out = Vec::new();
    for abc in inputs().chunks(3) {
        let (a, b, c) = (abc[0], abc[1], abc[2]);
        let p = a * b;
        let fused = |x: f32, y: f32, z: f32| if fmad { x.mul_add(y, z) } else { x * y + z };
        let r = [
            fused(a, b, c),
            fused(a, b, -c),
            fused(-a, b, c),
            p + c,
            p + c + p,
            // The negation's NaN (sign flipped) reaches arithmetic only.
            fused(-a, b, c) + -a,
            fused(-a, b, c),
        ];
        out.extend(r.map(canon));
        out.push((-a).to_bits());
    }
    out
}

#[test]
fn products_and_sums_fuse_as_on_a_gpu() {
    let want = expected(true);
    let unfused = expected(false);
    // The inputs tell the two apart in every fused column.
    for (col, least) in [
        (0, THREADS / 4),
        (1, THREADS / 4),
        (2, THREADS / 4),
        (5, 4),
        (6, 4),
    ] {
        let differ = (0..THREADS)
            .filter(|t| want[t * COLS + col] != unfused[t * COLS + col])
            .count();
        assert!(
            differ >= least,
            "column {col}: only {differ} threads differ"
        );
    }
    for backend in [Backend::Interp, Backend::Cpu] {
        same(&run(backend, true), &want, &format!("{backend:?} fused"));
    }
    // The stored negation of the NaN keeps its bits, sign flipped.
    assert_eq!(want[5 * COLS + 7], 0xffc0_0000);
}

#[test]
fn fmad_false_rounds_each_operation() {
    let want = expected(false);
    for backend in [Backend::Interp, Backend::Cpu] {
        same(&run(backend, false), &want, &format!("{backend:?} unfused"));
    }
}

/// Equal bits, or a panic naming the first thread and column that differ.
fn same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len());
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: thread {} column {}: {:#010x}, want {:#010x}",
            i / COLS,
            i % COLS,
            got[i],
            want[i]
        );
    }
}
