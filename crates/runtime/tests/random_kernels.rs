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
/// one around the input's middle, or a 64-bit one; or at `%rw`, the
/// thread's block row times a pitch made from the grid's size plus its
/// column (inside the input in every layout here); with a small offset or
/// none.
fn global_load(rng: &mut Rng, out: &mut String) {
    let r = |rng: &mut Rng| format!("%r{}", rng.pick(NREG));
    let f = |rng: &mut Rng| format!("%f{}", rng.pick(NREG));
    let a = r(rng);
    out.push_str(&match rng.pick(4) {
        // the thread's row times a pitch only known at run time, plus its
        // column (%rw): each block row of a warp reads consecutive words
        3 => "  mul.wide.u32 %tx, %rw, 4;\n  add.s64 %tl, %in, %tx;\n".to_string(),
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
    const PLAIN: [usize; 21] = [
        0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 14, 16, 17, 19, 20, 22, 23, 24, 25, 26,
    ];
    const PLAIN_DEEP: [usize; 18] = [
        0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 16, 17, 20, 22, 23, 24, 25, 26,
    ];
    let choice = match depth {
        0..=2 if plain => PLAIN[rng.pick(PLAIN.len())],
        _ if plain => PLAIN_DEEP[rng.pick(PLAIN_DEEP.len())],
        0 => rng.pick(27),
        1 | 2 => [
            0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26,
        ][rng.pick(23)],
        _ => [
            0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15, 16, 17, 18, 20, 22, 23, 24, 25, 26,
        ][rng.pick(20)],
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
            // (every rounding, flushing and saturation; signed zeros and
            // NaNs come from the inputs and from x - x, 0 * -y...)
            let op = [
                "add.rn.f32",
                "sub.rn.f32",
                "mul.rn.f32",
                "min.f32",
                "max.f32",
                "div.rn.f32",
                "add.rz.f32",
                "mul.rp.ftz.f32",
                "min.ftz.f32",
                "max.NaN.f32",
                "min.NaN.f32",
                "copysign.f32",
                "sub.rm.f32",
                "add.rp.ftz.f32",
                "mul.rn.ftz.f32",
                "add.sat.f32",
                "mul.rn.sat.f32",
                "sub.rz.ftz.sat.f32",
                "div.rn.ftz.f32",
                "div.rz.f32",
            ][rng.pick(20)];
            out.push_str(&format!("  {op} {}, {}, {};\n", f(rng), f(rng), f(rng)));
            if rng.pick(3) == 0 {
                // rounding to an integral value, in place
                let op = [
                    "cvt.rni.f32.f32",
                    "cvt.rzi.ftz.f32.f32",
                    "cvt.rmi.f32.f32",
                    "cvt.rpi.sat.f32.f32",
                ][rng.pick(4)];
                out.push_str(&format!("  {op} {}, {};\n", f(rng), f(rng)));
            }
        }
        3 => {
            let op = [
                "fma.rn.f32",
                "fma.rz.f32",
                "fma.rm.ftz.f32",
                "fma.rn.sat.f32",
                "fma.rp.ftz.sat.f32",
            ][rng.pick(5)];
            out.push_str(&format!(
                "  {op} {}, {}, {}, {};\n",
                f(rng),
                f(rng),
                f(rng),
                f(rng)
            ))
        }
        4 => {
            let c = [
                "cvt.rn.f32.s32",
                "cvt.rn.f32.u32",
                "cvt.rz.f32.s32",
                "cvt.rm.f32.u32",
            ][rng.pick(4)];
            out.push_str(&format!("  {c} {}, {};\n", f(rng), r(rng)));
        }
        5 => {
            let c = [
                "cvt.rzi.s32.f32",
                "cvt.rni.u32.f32",
                "cvt.rmi.s32.f32",
                "cvt.rpi.ftz.s32.f32",
                "cvt.rzi.u16.f32",
            ][rng.pick(5)];
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
            // if/else on a lane-dependent condition: one predicate per
            // depth (an if inside an arm leaves the outer one's alone) or
            // %p0, which other statements and inner ifs may rewrite
            *labels += 2;
            let (le, lj) = (*labels - 1, *labels);
            let p = if rng.pick(2) == 0 {
                format!("%pc{depth}")
            } else {
                "%p0".to_string()
            };
            out.push_str(&format!(
                "  setp.lt.u32 {p}, {}, {};\n  @{p} bra $L{le};\n",
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
            // A pointer of its own stepped round the loop, as NVRTC's
            // strength reduction leaves `a[i + k * trip]` (the cpu crate's
            // `pointer_steps` rewrites it): from the input at the row
            // index %rw, the thread's index or a register below 512; in
            // steps of a word, 16 words, a word back or as many words as
            // the grid has CTAs (through a register). At most 3 trips stay
            // inside the input.
            let index = match rng.pick(3) {
                0 => "%rw".to_string(),
                1 => "%r9".to_string(),
                _ => {
                    out.push_str(&format!("  and.b32 %ra, {}, 511;\n", r(rng)));
                    "%ra".to_string()
                }
            };
            out.push_str(&format!(
                "  mul.wide.u32 %tx, {index}, 4;\n  add.s64 %tp{lh}, %in, %tx;\n"
            ));
            let step = match rng.pick(4) {
                0 => "4".to_string(),
                1 => "64".to_string(),
                2 => "-4".to_string(),
                _ => {
                    out.push_str(&format!(
                        "  mov.u32 %rq{lh}, %nctaid.x;\n  mul.wide.u32 %tq{lh}, %rq{lh}, 4;\n"
                    ));
                    format!("%tq{lh}")
                }
            };
            // (a counter and a predicate of its own: one definition each
            // besides the counter's start)
            out.push_str(&format!(
                "  mov.u32 %ru{lh}, {};\n$L{lh}:\n",
                1 + rng.pick(3)
            ));
            for _ in 0..16 {
                global_load(rng, out);
            }
            out.push_str(&format!(
                "  ld.global.u32 {}, [%tp{lh}+{}];\n",
                r(rng),
                [0, 4, 64][rng.pick(3)]
            ));
            stmt(rng, out, depth + 1, labels, regions, plain);
            out.push_str(&format!(
                "  add.s64 %tp{lh}, %tp{lh}, {step};\n  sub.u32 %ru{lh}, %ru{lh}, 1;\n  setp.ne.u32 %pu{lh}, %ru{lh}, 0;\n  @%pu{lh} bra $L{lh};\n"
            ));
        }
        26 => {
            // a loop of one block whose lanes leave it on different trips
            // (1 to 8): straight-line arithmetic on the kernel's registers
            // and on a float carried round the loop and read nowhere else
            // (the compiled backend writes that one and the counter
            // without blends, and sends a group whose lanes all go round
            // again straight back: see the cpu crate's
            // `uniform::live_in_one_block` and `lower::round_again`)
            *labels += 1;
            let l = *labels;
            out.push_str(&format!(
                "  and.b32 %rv{l}, {}, 7;\n  mov.f32 %fv{l}, {};\n$L{l}:\n",
                r(rng),
                f(rng)
            ));
            for _ in 0..1 + rng.pick(3) {
                let line = match rng.pick(3) {
                    0 => {
                        let op = ["add.u32", "xor.b32", "mul.lo.u32", "max.s32"][rng.pick(4)];
                        format!("{op} {}, {}, {}", r(rng), r(rng), r(rng))
                    }
                    1 => format!("fma.rn.f32 %fv{l}, %fv{l}, {}, {}", f(rng), f(rng)),
                    _ => format!("add.rn.f32 {}, {}, %fv{l}", f(rng), f(rng)),
                };
                out.push_str(&format!("  {line};\n"));
            }
            out.push_str(&format!(
                "  sub.u32 %rv{l}, %rv{l}, 1;\n  setp.ne.u32 %pv{l}, %rv{l}, -1;\n  @%pv{l} bra $L{l};\n"
            ));
        }
        21 => {
            // straight-line float arithmetic between two barriers, with
            // a store and load of the thread's own shared word: the
            // compiled backend may run such a region for two warps at
            // once, interleaved (see the cpu crate's `warp_pairs`)
            out.push_str("  bar.sync 0;\n");
            for _ in 0..8 + rng.pick(5) {
                let op = [
                    "fma.rn.f32",
                    "fma.rn.f32",
                    "add.rn.f32",
                    "mul.rn.f32",
                    "sub.rn.f32",
                    "div.rn.f32",
                    "max.f32",
                    "mul.rz.ftz.f32",
                ][rng.pick(8)];
                let extra = if op.starts_with("fma") {
                    format!(", {}", f(rng))
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "  {op} {}, {}, {}{extra};\n",
                    f(rng),
                    f(rng),
                    f(rng)
                ));
            }
            out.push_str(&format!(
                "  st.shared.f32 [%sh], {};\n  ld.shared.f32 {}, [%sh];\n  bar.sync 0;\n",
                f(rng),
                f(rng)
            ));
        }
        22 => {
            // double precision in every rounding, from and back to floats
            let d = |rng: &mut Rng| format!("%dd{}", rng.pick(3));
            out.push_str(&format!(
                "  cvt.f64.f32 %dd0, {};\n  cvt.f64.f32 %dd1, {};\n  cvt.rn.f64.s32 %dd2, {};\n",
                f(rng),
                f(rng),
                r(rng)
            ));
            for _ in 0..2 + rng.pick(3) {
                let line = match rng.pick(5) {
                    0 => {
                        let op =
                            ["fma.rn.f64", "fma.rz.f64", "fma.rp.f64", "fma.rm.f64"][rng.pick(4)];
                        format!("{op} {}, {}, {}, {}", d(rng), d(rng), d(rng), d(rng))
                    }
                    1 => {
                        let op = [
                            "sqrt.rn.f64",
                            "sqrt.rz.f64",
                            "rcp.rn.f64",
                            "rcp.rm.f64",
                            "abs.f64",
                            "neg.f64",
                        ][rng.pick(6)];
                        format!("{op} {}, {}", d(rng), d(rng))
                    }
                    _ => {
                        let op = [
                            "add.rn.f64",
                            "sub.rz.f64",
                            "mul.rm.f64",
                            "mul.rp.f64",
                            "div.rn.f64",
                            "div.rz.f64",
                            "div.rm.f64",
                            "min.f64",
                            "max.f64",
                            "copysign.f64",
                        ][rng.pick(10)];
                        format!("{op} {}, {}, {}", d(rng), d(rng), d(rng))
                    }
                };
                out.push_str(&format!("  {line};\n"));
            }
            let back = [
                "cvt.rn.f32.f64",
                "cvt.rz.f32.f64",
                "cvt.rm.ftz.f32.f64",
                "cvt.rp.f32.f64",
            ][rng.pick(4)];
            out.push_str(&format!("  {back} {}, {};\n", f(rng), d(rng)));
            let to_int = ["cvt.rni.s32.f64", "cvt.rzi.u32.f64", "cvt.rmi.s32.f64"][rng.pick(3)];
            out.push_str(&format!("  {to_int} {}, {};\n", r(rng), d(rng)));
        }
        23 => {
            // classification, half precision and saturating narrowing
            let class = [
                "normal",
                "subnormal",
                "finite",
                "infinite",
                "notanumber",
                "number",
            ][rng.pick(6)];
            out.push_str(&format!(
                "  testp.{class}.f32 %p1, {};\n  selp.b32 {}, {}, {}, %p1;\n",
                f(rng),
                r(rng),
                r(rng),
                r(rng)
            ));
            let half = if rng.pick(2) == 0 { "f16" } else { "bf16" };
            out.push_str(&format!(
                "  cvt.rn.{half}.f32 %hh0, {};\n  cvt.rn.{half}.f32 %hh1, {};\n",
                f(rng),
                f(rng)
            ));
            let op = if half == "f16" {
                [
                    "add.rn.f16",
                    "mul.rn.f16",
                    "sub.rn.ftz.f16",
                    "min.f16",
                    "max.NaN.f16",
                    "fma.rn.f16",
                ][rng.pick(6)]
            } else {
                ["min.bf16", "max.NaN.bf16", "fma.rn.bf16"][rng.pick(3)]
            };
            let c = if op.starts_with("fma") { ", %hh0" } else { "" };
            out.push_str(&format!(
                "  {op} %hh2, %hh0, %hh1{c};\n  cvt.f32.{half} {}, %hh2;\n",
                f(rng)
            ));
            let sat = [
                "cvt.sat.s8.s32",
                "cvt.sat.u8.s32",
                "cvt.sat.s16.u32",
                "cvt.sat.u16.s32",
            ][rng.pick(4)];
            out.push_str(&format!("  {sat} {}, {};\n", r(rng), r(rng)));
        }
        24 => {
            // 64-bit integer arithmetic, from and back to 32-bit registers
            let q = |rng: &mut Rng| format!("%q{}", rng.pick(3));
            out.push_str(&format!(
                "  cvt.u64.u32 %q0, {};\n  cvt.s64.s32 %q1, {};\n  mul.wide.u32 %q2, {}, {};\n",
                r(rng),
                r(rng),
                r(rng),
                r(rng)
            ));
            for _ in 0..2 + rng.pick(3) {
                let line = match rng.pick(4) {
                    0 => {
                        let op = [
                            "popc.b64", "clz.b64", "brev.b64", "not.b64", "neg.s64", "abs.s64",
                        ][rng.pick(6)];
                        let d = if op.starts_with("popc") || op.starts_with("clz") {
                            r(rng)
                        } else {
                            q(rng)
                        };
                        format!("{op} {d}, {}", q(rng))
                    }
                    1 => {
                        let op = ["shl.b64", "shr.s64", "shr.u64"][rng.pick(3)];
                        format!("{op} {}, {}, {}", q(rng), q(rng), r(rng))
                    }
                    _ => {
                        let op = [
                            "add.s64",
                            "sub.u64",
                            "mul.lo.u64",
                            "mul.hi.s64",
                            "mul.hi.u64",
                            "div.u64",
                            "rem.s64",
                            "div.s64",
                            "min.s64",
                            "max.u64",
                            "and.b64",
                            "xor.b64",
                        ][rng.pick(12)];
                        format!("{op} {}, {}, {}", q(rng), q(rng), q(rng))
                    }
                };
                out.push_str(&format!("  {line};\n"));
            }
            let back = ["cvt.u32.u64", "cvt.s32.s64", "cvt.sat.s32.s64"][rng.pick(3)];
            out.push_str(&format!("  {back} {}, {};\n", r(rng), q(rng)));
            out.push_str(&format!("  cvt.rn.f32.s64 {}, {};\n", f(rng), q(rng)));
        }
        25 => {
            // the thread's own local array: stores and loads at indices
            // from registers, of words and of pairs
            let at = |rng: &mut Rng| {
                format!(
                    "  and.b32 %ra, {}, 24;\n  cvt.u64.u32 %tl, %ra;\n  mov.u64 %tx, lbuf;\n  add.s64 %tl, %tl, %tx;\n",
                    r(rng)
                )
            };
            out.push_str(&at(rng));
            out.push_str(&if rng.pick(2) == 0 {
                format!("  st.local.u32 [%tl], {};\n", r(rng))
            } else {
                format!("  st.local.v2.f32 [%tl], {{{}, {}}};\n", f(rng), f(rng))
            });
            out.push_str(&at(rng));
            out.push_str(&if rng.pick(2) == 0 {
                format!("  ld.local.u32 {}, [%tl+4];\n", r(rng))
            } else {
                format!("  ld.local.v2.f32 {{{}, {}}}, [%tl];\n", f(rng), f(rng))
            });
        }
        20 => {
            // a thread, block or grid index mixed into a register (wide
            // CTAs rewrite %tid.x, %ntid.x and %ctaid.x: each thread must
            // still see its own CTA's)
            let sreg = [
                "%tid.x",
                "%tid.y",
                "%ntid.x",
                "%ntid.y",
                "%ctaid.x",
                "%nctaid.x",
            ][rng.pick(6)];
            // (%rn: a value the same for every thread that the compiled
            // code does not know, from the grid's size, as a row pitch
            // passed in: `%tid.y * %rn` differs between the block rows of
            // a warp by a run-time amount)
            let d = r(rng);
            out.push_str(&format!(
                "  mov.u32 %rb, {sreg};\n  mad.lo.u32 {d}, %rb, {}, {};\n",
                ["1", "3", "977", "%rn"][rng.pick(4)],
                r(rng)
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

/// How a campaign's kernels are launched: `ctas` CTAs along x of `block`
/// threads, by `workers` threads (all cores: `None`); `shared`: the kernel
/// declares shared memory (its exchanges need it; wide CTAs take none).
#[derive(Clone, Copy)]
struct Layout {
    ctas: u32,
    block: [u32; 2],
    shared: bool,
    workers: Option<usize>,
    /// Lanes of the compiled backend's warps (automatic: `None`).
    width: Option<u32>,
}

impl Layout {
    fn threads(self) -> u32 {
        self.block[0] * self.block[1]
    }

    /// Threads of the grid.
    fn all_threads(self) -> usize {
        (self.ctas * self.threads()) as usize
    }

    /// The scratch buffer the stores write: per CTA and 32-lane warp, a
    /// region for each store statement (up to `SCRATCH_REGIONS` of them),
    /// 256 words each with room for the `+4` offset.
    fn scratch_bytes(self) -> usize {
        let warps = self.threads().div_ceil(32) as usize;
        self.ctas as usize * warps * SCRATCH_WARP_BYTES + 2 * SCRATCH_PAD_BYTES
    }
}

/// Two CTAs of 64 threads on all cores: every statement kind fits.
const SMALL: Layout = Layout {
    ctas: 2,
    block: [64, 1],
    shared: true,
    workers: None,
    width: None,
};

fn kernel(seed: u64, plain: bool, layout: Layout) -> String {
    let mut rng = Rng(seed | 1);
    let mut body = String::new();
    let mut labels = 0;
    // Scratch regions the store statements have taken.
    let mut regions = 0;
    let n = 4 + rng.pick(10);
    for _ in 0..n {
        stmt(&mut rng, &mut body, 0, &mut labels, &mut regions, plain);
    }
    // Registers start from the thread's index in the grid (%rg), so CTAs
    // compute apart and each thread's outputs are its own.
    let mut init = String::new();
    for i in 0..NREG {
        init.push_str(&format!(
            "  mad.lo.u32 %r{i}, %rg, {}, {};\n",
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
    let shared = if layout.shared {
        "  .shared .align 4 .b8 buf[1024];\n"
    } else {
        ""
    };
    // %sh..%shr: this thread's word, its neighbour's, its half-warp's
    // first and lane i % 16's, in `buf`.
    let shared_addrs = if layout.shared {
        "  mov.u64 %sh, buf;\n  mul.wide.u32 %t64, %r9, 4;\n  add.s64 %sh, %sh, %t64;\n  xor.b32 %r8, %r9, 1;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shn, buf;\n  add.s64 %shn, %shn, %t64;\n\
  and.b32 %r8, %r9, -16;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shb, buf;\n  add.s64 %shb, %shb, %t64;\n\
  and.b32 %r8, %r9, -17;\n  mul.wide.u32 %t64, %r8, 4;\n  mov.u64 %shr, buf;\n  add.s64 %shr, %shr, %t64;\n"
    } else {
        ""
    };
    // %r9: the thread's index in its CTA; its 32-lane warp's scratch is
    // number ctaid * warps + r9 / 32.
    format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry rk(.param .u64 po, .param .u64 pin, .param .u64 pscr, .param .u64 pcnt)\n{{\n\
  .reg .b32 %r<10>;\n  .reg .b32 %rc<4>;\n  .reg .pred %pc<4>;\n  .reg .b32 %ru<256>;\n  .reg .pred %pu<256>;\n  .reg .b32 %rv<256>;\n  .reg .pred %pv<256>;\n  .reg .f32 %fv<256>;\n  .reg .f32 %f<6>;\n  .reg .pred %p<2>;\n  .reg .f64 %d0;\n  .reg .f64 %dd<3>;\n  .reg .b16 %hh<3>;\n  .reg .b64 %q<3>;\n  .local .align 8 .b8 lbuf[40];\n  .reg .b64 %tp<256>;\n  .reg .b64 %tq<256>;\n  .reg .b32 %rq<256>;\n  .reg .b64 %out, %t64, %sh, %shn, %shb, %shr, %ta, %tb, %tc, %tl, %ts, %tv, %tx, %in, %inmid, %scr, %cnt;\n  .reg .b32 %ra, %rb, %rk, %rg, %rn, %rw, %ry;\n{shared}\
  mov.u32 %r9, %tid.x;\n  mov.u32 %ra, %tid.y;\n  mov.u32 %rb, %ntid.x;\n  mad.lo.u32 %r9, %ra, %rb, %r9;\n  mov.u32 %ra, %ctaid.x;\n  mad.lo.u32 %rg, %ra, {threads}, %r9;\n  setp.ne.u32 %p0, %r9, 5;\n\
  mov.u32 %rb, 0;\n  st.local.v2.u32 [lbuf], {{%rb, %rb}};\n  st.local.v2.u32 [lbuf+8], {{%rb, %rb}};\n  st.local.v2.u32 [lbuf+16], {{%rb, %rb}};\n  st.local.v2.u32 [lbuf+24], {{%rb, %rb}};\n  st.local.v2.u32 [lbuf+32], {{%rb, %rb}};\n\
  ld.param.u64 %cnt, [pcnt];\n  ld.param.u64 %in, [pin];\n  add.s64 %in, %in, {IN_PAD};\n  add.s64 %inmid, %in, 2048;\n  mov.u32 %rn, %nctaid.x;\n  mad.lo.u32 %rn, %rn, 23, 5;\n  mov.u32 %rw, %tid.x;\n  mov.u32 %ry, %tid.y;\n  mad.lo.u32 %rw, %ry, %rn, %rw;\n  ld.param.u64 %scr, [pscr];\n  mul.lo.u32 %ra, %ra, {warps};\n  shr.u32 %rb, %r9, 5;\n  add.u32 %ra, %ra, %rb;\n  mul.wide.u32 %t64, %ra, {SCRATCH_WARP};\n  add.s64 %scr, %scr, %t64;\n  add.s64 %scr, %scr, {SCRATCH_PAD};\n  ld.param.u64 %out, [po];\n  mul.wide.u32 %t64, %rg, {};\n  add.s64 %out, %out, %t64;\n\
{shared_addrs}{init}{body}{stores}  ret;\n}}\n",
        8 * NREG,
        threads = layout.threads(),
        warps = layout.threads().div_ceil(32),
        IN_PAD = IN_PAD_BYTES,
        SCRATCH_WARP = SCRATCH_WARP_BYTES,
        SCRATCH_PAD = SCRATCH_PAD_BYTES,
    )
}

const SCRATCH_REGIONS: usize = 16;
const SCRATCH_REGION_BYTES: usize = 256 * 4 + 64;
const SCRATCH_PAD_BYTES: usize = 64;
const SCRATCH_WARP_BYTES: usize = SCRATCH_REGIONS * SCRATCH_REGION_BYTES;

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

/// What a campaign found: the disagreements, and how many kernels the
/// compiled backend ran as wide CTAs (see the cpu crate's `merge`).
struct Outcome {
    failures: Vec<String>,
    merged: usize,
}

/// Kernels `first..first + count` (of the plain kind or not) on both
/// backends, launched as `layout` says.
fn compare(first: u64, count: u64, plain: bool, layout: Layout) -> Outcome {
    let block = [layout.block[0], layout.block[1], 1];
    let mut failures = Vec::new();
    let mut merged = 0;
    for seed in first..first + count {
        let src = kernel(seed * 0x9e37_79b9_7f4a_7c15, plain, layout);
        let mut outs = Vec::new();
        for backend in [Backend::Interp, Backend::Cpu] {
            let mut dev = Device::new()
                .with_backend(backend)
                .with_disk_cache(None)
                .with_timeout(Some(std::time::Duration::from_secs(10)));
            if let Some(n) = layout.workers {
                dev = dev.with_threads(n);
            }
            dev = dev.with_warp_width(layout.width);
            let m = match dev.load_ptx(&src) {
                Ok(m) => m,
                Err(e) => panic!("seed {seed}: generated PTX does not load: {e}\n{src}"),
            };
            let k = m.kernel("rk").unwrap();
            if backend == Backend::Cpu {
                if let (Backend::Interp, Some(why)) = k.effective_backend(block) {
                    failures.push(format!("seed {seed}: cpu backend fell back: {why}"));
                }
            }
            let out = dev.buffer_zeroed(layout.all_threads() * 8 * NREG).unwrap();
            let inp = dev.buffer_from(&input_words()).unwrap();
            let scr = dev.buffer_zeroed(layout.scratch_bytes()).unwrap();
            let cnt = dev.buffer_zeroed(COUNTER_BYTES).unwrap();
            let r = k.launch(
                [layout.ctas, 1, 1],
                block,
                0,
                &[
                    Arg::Buffer(&out),
                    Arg::Buffer(&inp),
                    Arg::Buffer(&scr),
                    Arg::Buffer(&cnt),
                ],
            );
            if backend == Backend::Cpu && r.is_ok() {
                let c = k.compiled(block);
                if let Ok(c) = c.as_ref().as_ref() {
                    if c.ctas_merged() > 1 && !c.ran_unmerged() {
                        merged += 1;
                    }
                }
            }
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
    Outcome { failures, merged }
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
    // (the other tests of this file have no barriers: the count is this
    // test's)
    let before = warpfold_cpu::warp_pair_blocks();
    let converted_before = warpfold_cpu::if_converted_branches();
    let rounds_before = warpfold_cpu::straight_rounds();
    let mut failures = compare(first, count, false, SMALL).failures;
    let paired = warpfold_cpu::warp_pair_blocks() - before;
    let converted = warpfold_cpu::if_converted_branches() - converted_before;
    let rounds = warpfold_cpu::straight_rounds() - rounds_before;
    // (branches and loops of this file's other tests, which run alongside,
    // count too: `if_conversion.rs` checks that ifs convert)
    eprintln!("{count} kernels, {paired} regions run by two warps interleaved, {converted} branches converted, {rounds} loops of one block with a way straight back");
    if count >= 150 && rounds == 0 {
        failures.push(format!(
            "no loop of one block of {count} kernels went straight back round"
        ));
    }
    // Only warps of 32 lanes pair: the automatic width keeps 32 for most
    // of these kernels with AVX-512, not with AVX2.
    let off = std::env::var("WARPFOLD_PAIRS").is_ok_and(|x| x == "off")
        || ["WARPFOLD_WARP_WIDTH", "WARPFOLD_CPU"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
        || !warpfold_cpu::code_target().contains("AVX-512");
    if count >= 150 && paired == 0 && !off {
        failures.push(format!(
            "no region of {count} kernels ran two warps interleaved"
        ));
    }
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
    let mut failures = compare(first, count, true, SMALL).failures;
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

/// Plain kernels without shared memory on grids wide enough that the
/// compiled backend runs CTAs neighbouring along x as one wide CTA where
/// their warps march a loop in step (see the cpu crate's `merge`): each
/// thread must still see its own CTA's indices and write its own outputs.
/// Grids whose last wide CTA is short of real ones, blocks of one and two
/// rows, one worker and two (a third as many kernels, split between them).
#[test]
fn random_kernels_in_wide_ctas_agree_between_backends() {
    let (first, count) = campaign();
    let count = count.div_ceil(3);
    let layouts = [
        (14, [64, 1], 1),
        (13, [32, 2], 1),
        (13, [128, 1], 1),
        (30, [64, 1], 2),
    ];
    let share = count.div_ceil(layouts.len() as u64);
    let (mut failures, mut merged) = (Vec::new(), 0);
    for (i, (ctas, block, workers)) in layouts.into_iter().enumerate() {
        let layout = Layout {
            ctas,
            block,
            shared: false,
            workers: Some(workers),
            width: None,
        };
        let o = compare(first + i as u64 * share, share, true, layout);
        failures.extend(o.failures);
        merged += o.merged;
    }
    eprintln!("{count} plain kernels in wide grids, {merged} ran as wide CTAs");
    let off = ["WARPFOLD_LOCKSTEP", "WARPFOLD_MERGE"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|x| x == "off"));
    if count >= 50 && merged == 0 && !off {
        failures.push(format!("no kernel of {count} ran as wide CTAs"));
    }
    assert!(
        failures.is_empty(),
        "{} of {count} plain kernels in wide grids disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Blocks whose rows are narrower than a 32-lane warp (16 x 4 and 8 x 8,
/// a third as many kernels each), compiled with 32 lanes: a warp holds
/// two or four block rows, and registers that differ between its rows by
/// a run-time amount (`%tid.y * %rn`) are kept as one scalar per row (see
/// the cpu crate's `emit`), which must change nothing.
#[test]
fn random_kernels_in_blocks_of_narrow_rows_agree_between_backends() {
    let (first, count) = campaign();
    let count = count.div_ceil(3);
    let before = warpfold_cpu::row_registers();
    let stepped_before = warpfold_cpu::stepped_pointers();
    let mut failures = Vec::new();
    for (i, block) in [[16, 4], [8, 8]].into_iter().enumerate() {
        let layout = Layout {
            ctas: 2,
            block,
            shared: true,
            workers: None,
            width: Some(32),
        };
        failures.extend(compare(first + i as u64 * count, count, true, layout).failures);
    }
    let rows = warpfold_cpu::row_registers() - before;
    let stepped = warpfold_cpu::stepped_pointers() - stepped_before;
    eprintln!(
        "{} kernels in blocks of narrow rows, {rows} registers kept per row, {stepped} stepped pointers made again at each use",
        2 * count
    );
    let steps_off = std::env::var("WARPFOLD_POINTER_STEPS").is_ok_and(|v| v == "off");
    if count >= 20 && stepped == 0 && !steps_off {
        failures.push(format!(
            "no stepped pointer of {} kernels was rewritten",
            2 * count
        ));
    }
    let off = std::env::var("WARPFOLD_ROW_REGS").is_ok_and(|v| v == "off");
    if count >= 20 && rows == 0 && !off {
        failures.push(format!(
            "no register of {} kernels was kept per row",
            2 * count
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} kernels disagree:\n{}",
        failures.len(),
        2 * count,
        failures.join("\n")
    );
}
