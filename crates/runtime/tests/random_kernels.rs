//! Differential testing on generated kernels: random small PTX programs
//! (straight-line integer and float arithmetic, divergent branches, loops
//! with lane-dependent trip counts and loops every thread runs equally
//! often, which the compiled backend may run with a CTA's warps in step,
//! barriers, shuffles and votes, global
//! loads and stores at computed indices, global integer adds) must give
//! bit-identical outputs on the compiled backend and on the interpreter.

use warpfold::{Arg, Backend, Device};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const NREG: usize = 6;

/// A global load at an index from a register, kept inside the input:
/// where the register is affine in the lane (as every one starts) the mask
/// makes the index wrap inside the warp, which the compiled loads handle
/// apart (the lanes past the jump); as a 32-bit unsigned index, a signed
/// one around the input's middle, or a 64-bit one; with a small offset or
/// none.
fn global_load(rng: &mut Rng, out: &mut String) {
    let r = |rng: &mut Rng| format!("%r{}", rng.pick(NREG));
    let f = |rng: &mut Rng| format!("%f{}", rng.pick(NREG));
    let a = r(rng);
    out.push_str(&match rng.pick(3) {
        0 => format!("  and.b32 %ra, {a}, 1023;\n  mul.wide.u32 %tx, %ra, 4;\n  add.s64 %tl, %in, %tx;\n"),
        1 => format!("  and.b32 %ra, {a}, 1023;\n  sub.s32 %ra, %ra, 512;\n  mul.wide.s32 %tx, %ra, 4;\n  add.s64 %tl, %inmid, %tx;\n"),
        _ => format!("  cvt.u64.u32 %tx, {a};\n  and.b64 %tx, %tx, 1023;\n  shl.b64 %tx, %tx, 2;\n  add.s64 %tl, %in, %tx;\n"),
    });
    let off = [0, 0, 4, -4, 64][rng.pick(5)];
    let at = if off == 0 {
        "[%tl]".to_string()
    } else {
        format!("[%tl+{off}]")
    };
    out.push_str(&if rng.pick(3) == 0 {
        format!("  ld.global.f32 {}, {at};\n", f(rng))
    } else {
        format!("  ld.global.u32 {}, {at};\n", r(rng))
    });
}

/// One random statement over registers %r0..%r5 (u32) and %f0..%f5 (f32).
/// `plain`: no barriers, warp operations or atomics.
fn stmt(
    rng: &mut Rng,
    out: &mut String,
    depth: u32,
    labels: &mut u32,
    regions: &mut usize,
    plain: bool,
) {
    let r = |rng: &mut Rng| format!("%r{}", rng.pick(NREG));
    let f = |rng: &mut Rng| format!("%f{}", rng.pick(NREG));
    // Warp collectives and barriers only where all lanes are together
    // (depth 0): inside divergent code they are undefined or deadlock.
    // (15's approximations come with a shared atomic)
    const PLAIN: [usize; 15] = [0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 14, 16, 17, 19];
    const PLAIN_DEEP: [usize; 12] = [0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 16, 17];
    let choice = match depth {
        0..=2 if plain => PLAIN[rng.pick(PLAIN.len())],
        _ if plain => PLAIN_DEEP[rng.pick(PLAIN_DEEP.len())],
        0 => rng.pick(20),
        1 | 2 => [0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 14, 15, 16, 17, 18, 19][rng.pick(17)],
        _ => [0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15, 16, 17, 18][rng.pick(14)],
    };
    match choice {
        0 => {
            let op = [
                "add.u32",
                "sub.u32",
                "mul.lo.u32",
                "and.b32",
                "or.b32",
                "xor.b32",
                "min.s32",
                "max.u32",
                "mul.hi.u32",
                "shl.b32",
                "shr.s32",
            ][rng.pick(11)];
            out.push_str(&format!("  {op} {}, {}, {};\n", r(rng), r(rng), r(rng)));
        }
        1 => {
            let op = ["div.s32", "rem.u32", "div.u32", "rem.s32"][rng.pick(4)];
            out.push_str(&format!("  {op} {}, {}, {};\n", r(rng), r(rng), r(rng)));
        }
        2 => {
            let op = [
                "add.rn.f32",
                "sub.rn.f32",
                "mul.rn.f32",
                "min.f32",
                "max.f32",
                "div.rn.f32",
                "add.rz.f32",
                "mul.rp.ftz.f32",
            ][rng.pick(8)];
            out.push_str(&format!("  {op} {}, {}, {};\n", f(rng), f(rng), f(rng)));
        }
        3 => out.push_str(&format!(
            "  fma.rn.f32 {}, {}, {}, {};\n",
            f(rng),
            f(rng),
            f(rng),
            f(rng)
        )),
        4 => {
            let c = ["cvt.rn.f32.s32", "cvt.rn.f32.u32"][rng.pick(2)];
            out.push_str(&format!("  {c} {}, {};\n", f(rng), r(rng)));
        }
        5 => {
            let c = ["cvt.rzi.s32.f32", "cvt.rni.u32.f32", "cvt.rmi.s32.f32"][rng.pick(3)];
            out.push_str(&format!("  {c} {}, {};\n", r(rng), f(rng)));
        }
        6 => out.push_str(&format!(
            "  popc.b32 {}, {};\n  brev.b32 {}, {};\n",
            r(rng),
            r(rng),
            r(rng),
            r(rng)
        )),
        7 => {
            let mode = ["up", "down", "bfly", "idx"][rng.pick(4)];
            // Segments of 32 to 2 lanes, the clamp CUDA uses for the mode
            // (or any); the lane operand constant or from a register (the
            // backend lowers the two differently).
            let width = 32 >> rng.pick(5);
            let clamp = match rng.pick(4) {
                0 => rng.pick(32),
                _ if mode == "up" => 0,
                _ => 31,
            };
            let c = ((32 - width) << 8) | clamp;
            let b = if rng.pick(3) == 0 {
                r(rng)
            } else {
                rng.pick(32).to_string()
            };
            out.push_str(&format!(
                "  shfl.sync.{mode}.b32 {}, {}, {b}, {c}, -1;\n",
                r(rng),
                r(rng),
            ));
        }
        8 => {
            // if/else on a lane-dependent condition
            *labels += 2;
            let (le, lj) = (*labels - 1, *labels);
            out.push_str(&format!(
                "  setp.lt.u32 %p0, {}, {};\n  @%p0 bra $L{le};\n",
                r(rng),
                r(rng)
            ));
            stmt(rng, out, depth + 1, labels, regions, plain);
            out.push_str(&format!("  bra $L{lj};\n$L{le}:\n"));
            stmt(rng, out, depth + 1, labels, regions, plain);
            out.push_str(&format!("$L{lj}:\n"));
        }
        9 => {
            // a loop with a lane-dependent trip count (0..7)
            *labels += 2;
            let (lh, lx) = (*labels - 1, *labels);
            // One counter per nesting depth, so inner loops do not reset it.
            out.push_str(&format!("  and.b32 %rc{depth}, {}, 7;\n$L{lh}:\n  setp.eq.u32 %p1, %rc{depth}, 0;\n  @%p1 bra $L{lx};\n", r(rng)));
            stmt(rng, out, depth + 1, labels, regions, plain);
            out.push_str(&format!(
                "  sub.u32 %rc{depth}, %rc{depth}, 1;\n  bra $L{lh};\n$L{lx}:\n"
            ));
        }
        10 => out.push_str(&format!("  vote.sync.ballot.b32 {}, %p0, -1;\n", r(rng))),
        12 => {
            // bit-field and byte operations (per-lane ALU helpers)
            let (a, b, c) = (r(rng), r(rng), r(rng));
            let op = match rng.pick(5) {
                0 => format!("bfe.u32 {}, {a}, {b}, {c};", r(rng)),
                1 => format!("bfe.s32 {}, {a}, {b}, {c};", r(rng)),
                2 => format!("prmt.b32 {}, {a}, {b}, {c};", r(rng)),
                3 => format!("bfi.b32 {}, {a}, {b}, {c}, {};", r(rng), r(rng)),
                _ => format!("lop3.b32 {}, {a}, {b}, {c}, {};", r(rng), rng.pick(256)),
            };
            out.push_str(&format!("  {op}\n"));
        }
        13 => {
            // predicates combined, then selection
            let op = ["and", "or", "xor"][rng.pick(3)];
            out.push_str(&format!(
                "  setp.gt.{op}.s32 %p1, {}, {}, %p0;\n  selp.b32 {}, {}, {}, %p1;\n",
                r(rng),
                r(rng),
                r(rng),
                r(rng),
                r(rng)
            ));
            out.push_str(&format!(
                "  setp.ltu.f32 %p1, {}, {};\n  selp.f32 {}, {}, {}, %p1;\n",
                f(rng),
                f(rng),
                f(rng),
                f(rng),
                f(rng)
            ));
        }
        14 => {
            // funnel shifts, wide multiplies, 64-bit arithmetic and back
            out.push_str(&format!(
                "  shf.l.wrap.b32 {}, {}, {}, {};\n",
                r(rng),
                r(rng),
                r(rng),
                r(rng)
            ));
            out.push_str(&format!(
                "  mul.wide.s32 %t64, {}, {};\n  shr.u64 %t64, %t64, 7;\n  cvt.u32.u64 {}, %t64;\n",
                r(rng),
                r(rng),
                r(rng)
            ));
        }
        15 => {
            // float specials: sqrt, rcp, abs/neg, conversions through f64
            let op = [
                "sqrt.rn.f32",
                "rcp.rn.f32",
                "abs.f32",
                "neg.f32",
                "sqrt.approx.ftz.f32",
                "ex2.approx.f32",
                "ex2.approx.ftz.f32",
                "lg2.approx.f32",
                "sin.approx.f32",
                "cos.approx.ftz.f32",
                "rsqrt.approx.f32",
                "rsqrt.approx.ftz.f32",
                "rcp.approx.f32",
                "rcp.approx.ftz.f32",
            ][rng.pick(14)];
            out.push_str(&format!("  {op} {}, {};\n", f(rng), f(rng)));
            let op = ["div.approx.f32", "div.approx.ftz.f32", "div.full.f32"][rng.pick(3)];
            out.push_str(&format!("  {op} {}, {}, {};\n", f(rng), f(rng), f(rng)));
            // an atomic in this warp's own part of shared memory (so the old
            // values do not depend on how warps interleave)
            out.push_str(&format!(
                "  and.b32 %ra, {}, 60;\n  shr.u32 %rb, %r9, 5;\n  shl.b32 %rb, %rb, 8;\n  add.u32 %ra, %ra, %rb;\n  cvt.u64.u32 %ta, %ra;\n  mov.u64 %t64, buf;\n  add.s64 %ta, %ta, %t64;\n  add.s64 %ta, %ta, 512;\n",
                r(rng)
            ));
            let atom = match rng.pick(5) {
                0 => format!("atom.shared.add.f32 {}, [%ta], {};", f(rng), f(rng)),
                1 => format!(
                    "atom.shared.cas.b32 {}, [%ta], {}, {};",
                    r(rng),
                    r(rng),
                    r(rng)
                ),
                _ => {
                    let op = [
                        "add.u32", "min.s32", "max.u32", "xor.b32", "exch.b32", "inc.u32",
                    ][rng.pick(6)];
                    format!("atom.shared.{op} {}, [%ta], {};", r(rng), r(rng))
                }
            };
            out.push_str(&format!("  {atom}\n"));
            out.push_str(&format!(
                "  cvt.f64.f32 %d0, {};\n  mul.rn.f64 %d0, %d0, %d0;\n  cvt.rn.f32.f64 {}, %d0;\n",
                f(rng),
                f(rng)
            ));
        }
        16 => global_load(rng, out),
        19 => {
            // a loop every thread of the CTA runs the same number of times
            // (1 to 3), reading global memory 16 times a trip: the compiled
            // backend may run the CTA's warps in step round it (a barrier
            // on its way back, see the cpu crate's `lockstep`)
            *labels += 1;
            let lh = *labels;
            // (a counter and a predicate of its own: one definition each
            // besides the counter's start)
            out.push_str(&format!(
                "  mov.u32 %ru{lh}, {};\n$L{lh}:\n",
                1 + rng.pick(3)
            ));
            for _ in 0..16 {
                global_load(rng, out);
            }
            stmt(rng, out, depth + 1, labels, regions, plain);
            out.push_str(&format!(
                "  sub.u32 %ru{lh}, %ru{lh}, 1;\n  setp.ne.u32 %pu{lh}, %ru{lh}, 0;\n  @%pu{lh} bra $L{lh};\n"
            ));
        }
        // (nothing once the regions are used up)
        17 if *regions >= SCRATCH_REGIONS => {}
        17 => {
            // a global store into a region of the scratch buffer of this
            // statement's own (per CTA and 32-lane warp), at an index
            // affine in the lane, masked to the region's 256 words: an odd
            // stride keeps the lanes of a warp apart (a race between lanes
            // has no defined winner, and warps split into 8 or 16 lanes
            // order them differently), and the mask makes it wrap inside
            // the warp where the compiled stores split (the lanes past the
            // jump); unsigned, signed around the middle, or 64-bit
            let k = *regions;
            *regions += 1;
            let stride = [1, 3, 5, 7, 33, 255, 251][rng.pick(7)];
            out.push_str(&format!(
                "  add.s64 %tb, %scr, {};\n  mad.lo.u32 %ra, %r9, {stride}, {};\n  and.b32 %ra, %ra, 255;\n",
                k * SCRATCH_REGION_BYTES,
                rng.pick(256)
            ));
            out.push_str(match rng.pick(3) {
                0 => "  mul.wide.u32 %tx, %ra, 4;\n  add.s64 %ts, %tb, %tx;\n",
                1 => "  sub.s32 %ra, %ra, 128;\n  mul.wide.s32 %tx, %ra, 4;\n  add.s64 %ts, %tb, %tx;\n  add.s64 %ts, %ts, 512;\n",
                _ => "  cvt.u64.u32 %tx, %ra;\n  shl.b64 %tx, %tx, 2;\n  add.s64 %ts, %tb, %tx;\n",
            });
            let at = ["[%ts]", "[%ts+4]"][rng.pick(2)];
            out.push_str(&if rng.pick(3) == 0 {
                format!("  st.global.f32 {at}, {};\n", f(rng))
            } else {
                format!("  st.global.u32 {at}, {};\n", r(rng))
            });
        }
        18 => {
            // a global integer add into the counters at an index from a
            // register (lanes may meet: the sums do not depend on the
            // order), 32-bit into the first 64 words or 64-bit into the 32
            // double words after them (a kernel with both keeps its adds
            // in memory; with one width the compiled code sums them per
            // worker), as `red` or as an `atom` whose result is never read;
            // each address register holds addresses into one buffer only,
            // as in compiled PTX (the per-worker sums need to see that)
            let a = r(rng);
            let v = r(rng);
            out.push_str(&if rng.pick(3) == 0 {
                format!("  and.b32 %ra, {a}, 31;\n  mul.wide.u32 %tx, %ra, 8;\n  add.s64 %tc, %cnt, %tx;\n  cvt.u64.u32 %tv, {v};\n  red.global.add.u64 [%tc+256], %tv;\n")
            } else {
                let op = [
                    "red.global.add.u32 [%tc]",
                    "red.global.add.s32 [%tc]",
                    "atom.global.add.u32 %rk, [%tc]",
                ][rng.pick(3)];
                format!("  and.b32 %ra, {a}, 63;\n  mul.wide.u32 %tx, %ra, 4;\n  add.s64 %tc, %cnt, %tx;\n  {op}, {v};\n")
            });
        }
        _ => {
            // exchange through shared memory across a barrier: from the
            // neighbour lane, the first lane of the half-warp (half
            // broadcasts) or lane i % 16 of the warp (both halves read one
            // row; `tid & ~16`)
            // (stores: own slot, or lane i % 16's, where both half-warps
            // write one row and the higher lane's value must win)
            let from = ["%shn", "%shb", "%shr"][rng.pick(3)];
            let to = ["%sh", "%sh", "%shr"][rng.pick(3)];
            out.push_str(&format!(
                "  st.shared.u32 [{to}], {};\n  bar.sync 0;\n  ld.shared.u32 {}, [{from}];\n  bar.sync 0;\n",
                r(rng),
                r(rng)
            ));
        }
    }
}

fn kernel(seed: u64, plain: bool) -> String {
    let mut rng = Rng(seed | 1);
    let mut body = String::new();
    let mut labels = 0;
    // Scratch regions the store statements have taken.
    let mut regions = 0;
    let n = 4 + rng.pick(10);
    for _ in 0..n {
        stmt(&mut rng, &mut body, 0, &mut labels, &mut regions, plain);
    }
    let mut init = String::new();
    for i in 0..NREG {
        init.push_str(&format!(
            "  mad.lo.u32 %r{i}, %r9, {}, {};\n",
            2 * i + 3,
            rng.next() % 1000
        ));
        init.push_str(&format!(
            "  cvt.rn.f32.u32 %f{i}, %r{i};\n  mul.rn.f32 %f{i}, %f{i}, 0f3DCCCCCD;\n"
        ));
    }
    let mut stores = String::new();
    for i in 0..NREG {
        stores.push_str(&format!(
            "  st.global.u32 [%out+{}], %r{i};\n  st.global.f32 [%out+{}], %f{i};\n",
            8 * i,
            8 * i + 4
        ));
    }
    format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry rk(.param .u64 po, .param .u64 pin, .param .u64 pscr, .param .u64 pcnt)\n{{\n\
  .reg .b32 %r<10>;\n  .reg .b32 %rc<4>;\n  .reg .b32 %ru<256>;\n  .reg .pred %pu<256>;\n  .reg .f32 %f<6>;\n  .reg .pred %p<2>;\n  .reg .f64 %d0;\n  .reg .b64 %out, %t64, %sh, %shn, %shb, %shr, %ta, %tb, %tc, %tl, %ts, %tv, %tx, %in, %inmid, %scr, %cnt;\n  .reg .b32 %ra, %rb, %rk;\n  .shared .align 4 .b8 buf[1024];\n\
  mov.u32 %r9, %tid.x;\n  setp.ne.u32 %p0, %r9, 5;\n\
  ld.param.u64 %cnt, [pcnt];\n  ld.param.u64 %in, [pin];\n  add.s64 %in, %in, {IN_PAD};\n  add.s64 %inmid, %in, 2048;\n  ld.param.u64 %scr, [pscr];\n  mov.u32 %ra, %ctaid.x;\n  shl.b32 %ra, %ra, 1;\n  shr.u32 %rb, %r9, 5;\n  add.u32 %ra, %ra, %rb;\n  mul.wide.u32 %t64, %ra, {SCRATCH_WARP};\n  add.s64 %scr, %scr, %t64;\n  add.s64 %scr, %scr, {SCRATCH_PAD};\n  ld.param.u64 %out, [po];\n  mul.wide.u32 %t64, %r9, {};\n  add.s64 %out, %out, %t64;\n\
  mov.u64 %sh, buf;\n  mul.wide.u32 %t64, %r9, 4;\n  add.s64 %sh, %sh, %t64;\n  xor.b32 %r8, %r9, 1;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shn, buf;\n  add.s64 %shn, %shn, %t64;\n\
  and.b32 %r8, %r9, -16;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shb, buf;\n  add.s64 %shb, %shb, %t64;\n\
  and.b32 %r8, %r9, -17;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shr, buf;\n  add.s64 %shr, %shr, %t64;\n\
{init}{body}{stores}  ret;\n}}\n",
        8 * NREG,
        IN_PAD = IN_PAD_BYTES,
        SCRATCH_WARP = SCRATCH_WARP_BYTES,
        SCRATCH_PAD = SCRATCH_PAD_BYTES,
    )
}

/// The scratch buffer the stores write: per CTA (2) and 32-lane warp (2),
/// a region for each store statement (up to `SCRATCH_REGIONS` of them),
/// 256 words each with room for the `+4` offset.
const SCRATCH_REGIONS: usize = 16;
const SCRATCH_REGION_BYTES: usize = 256 * 4 + 64;
const SCRATCH_PAD_BYTES: usize = 64;
const SCRATCH_WARP_BYTES: usize = SCRATCH_REGIONS * SCRATCH_REGION_BYTES;
const SCRATCH_BYTES: usize = 4 * SCRATCH_WARP_BYTES + 2 * SCRATCH_PAD_BYTES;

/// The counters the global adds go to: 64 words, then 32 double words.
const COUNTER_BYTES: usize = 512;

/// The input the loads read: 1024 words indexed from `%in`, with this much
/// before and after for their offsets.
const IN_PAD_BYTES: usize = 64;

/// Its contents: every bit pattern kind (as floats: normals, subnormals,
/// infinities, NaNs), the same on both backends.
fn input_words() -> Vec<u32> {
    (0..1024 + 2 * IN_PAD_BYTES as u32 / 4)
        .map(|i| i.wrapping_mul(0x9e37_79b1) ^ (i << 7))
        .collect()
}

/// Kernels `first..first + count` (of the plain kind or not) on both
/// backends; what disagreed.
fn compare(first: u64, count: u64, plain: bool) -> Vec<String> {
    let threads = 64u32;
    let mut failures = Vec::new();
    for seed in first..first + count {
        let src = kernel(seed * 0x9e37_79b9_7f4a_7c15, plain);
        let mut outs = Vec::new();
        for backend in [Backend::Interp, Backend::Cpu] {
            let dev = Device::new()
                .with_backend(backend)
                .with_timeout(Some(std::time::Duration::from_secs(10)));
            let m = match dev.load_ptx(&src) {
                Ok(m) => m,
                Err(e) => panic!("seed {seed}: generated PTX does not load: {e}\n{src}"),
            };
            let k = m.kernel("rk").unwrap();
            if backend == Backend::Cpu {
                if let (Backend::Interp, Some(why)) = k.effective_backend([threads, 1, 1]) {
                    failures.push(format!("seed {seed}: cpu backend fell back: {why}"));
                }
            }
            let out = dev.buffer_zeroed(threads as usize * 8 * NREG).unwrap();
            let inp = dev.buffer_from(&input_words()).unwrap();
            let scr = dev.buffer_zeroed(SCRATCH_BYTES).unwrap();
            let cnt = dev.buffer_zeroed(COUNTER_BYTES).unwrap();
            let r = k.launch(
                [2, 1, 1],
                [threads, 1, 1],
                0,
                &[
                    Arg::Buffer(&out),
                    Arg::Buffer(&inp),
                    Arg::Buffer(&scr),
                    Arg::Buffer(&cnt),
                ],
            );
            outs.push(
                r.map(|_| [out.to_bytes(), scr.to_bytes(), cnt.to_bytes()])
                    .map_err(|e| e.to_string()),
            );
        }
        let agree = match (&outs[0], &outs[1]) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !agree {
            failures.push(format!(
                "seed {seed}{}: backends differ ({:?} vs {:?})\n{src}",
                if plain { " (plain)" } else { "" },
                outs[0].as_ref().err(),
                outs[1].as_ref().err()
            ));
        }
    }
    failures
}

/// `WARPFOLD_RANDOM_KERNELS` (default 150) kernels from seed
/// `WARPFOLD_RANDOM_FIRST` (default 1, to reproduce one failure).
fn campaign() -> (u64, u64) {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    (
        var("WARPFOLD_RANDOM_FIRST").unwrap_or(1),
        var("WARPFOLD_RANDOM_KERNELS").unwrap_or(150),
    )
}

#[test]
fn random_kernels_agree_between_backends() {
    let (first, count) = campaign();
    let failures = compare(first, count, false);
    assert!(
        failures.is_empty(),
        "{} of {count} generated kernels disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Kernels without barriers, warp operations or atomics (a third as many):
/// where their loops that every thread runs equally often read enough,
/// the compiled backend runs them with the CTA's warps in step, which
/// must change nothing.
#[test]
fn random_kernels_without_barriers_agree_between_backends() {
    let (first, count) = campaign();
    let count = count.div_ceil(3);
    let before = warpfold_cpu::loops_in_step();
    let mut failures = compare(first, count, true);
    let in_step = warpfold_cpu::loops_in_step() - before;
    eprintln!("{count} plain kernels, {in_step} loops in step");
    if count >= 50 && in_step == 0 && std::env::var_os("WARPFOLD_LOCKSTEP").is_none() {
        failures.push(format!("no loop of {count} plain kernels ran in step"));
    }
    assert!(
        failures.is_empty(),
        "{} of {count} plain kernels disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
