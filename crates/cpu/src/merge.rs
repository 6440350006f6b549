//! Neighbouring CTAs run as one. A kernel whose warps march a loop in step
//! (see `lockstep`) reads, each turn, the rows of its CTA's tile and one
//! column either side of it: the 3-D stencil's 32 x 8 blocks read 34
//! columns a row, so the lines of their x-neighbours' edge columns come
//! into L1 for one word each, and come in again when the neighbour runs
//! its own march. K CTAs that follow each other along x instead run as one
//! "wide CTA" K times as wide (code shape `[K bx, by, bz]`: real CTA k is
//! columns `k bx ..`), so each turn takes the warps of all K CTAs, row
//! after row. The stencil's suite launch as 128 x 8 blocks ran 0.79-0.86
//! of the time of 32 x 8 blocks (three runs of the benchmark, Zen 4).
//! (Wide CTAs of shape `[bx, by, K]`, real CTA after real CTA, ran 1.26x
//! slower: a turn over four tiles one after the other outgrew L1.)
//!
//! A wide CTA behaves as its K real CTAs only where nothing shows that
//! they run together, which `lockstep` already asks of the kernels it puts
//! in step (no barriers, warp collectives, atomics, fences, host calls or
//! volatile accesses); merging is kept only where it does (see
//! `compile`). Besides: rows of whole warps (`bx` a power of two and a
//! multiple of 32, so no warp spans two real CTAs), no shared memory
//! (each real CTA would need its own) and no `%warpid`. Launches with too
//! few wide CTAs to keep every worker busy (or too wide a grid for the
//! wide CTA's code) run the kernel compiled unmerged instead (see
//! `launch`).

use crate::lanes::Shape;
use crate::pack::{not_32_bits, shared_sym, Emit};
use crate::prepare::Unsupported;
use warpfold_ir::*;

/// Real CTAs per wide CTA for blocks of `shape`, if merging can apply.
pub fn per_cta(shape: Shape) -> Option<u32> {
    let n = shape.iter().try_fold(1u32, |a, &d| a.checked_mul(d))?;
    if !shape[0].is_power_of_two() || !shape[0].is_multiple_of(32) || n == 0 {
        return None;
    }
    // The driver's tables hold 32 warps; four CTAs covered the stencil's
    // rows. A power of two keeps the wide CTA's x size one.
    let most = (1024 / n).min(4);
    let k = if most >= 4 { 4 } else { most.min(2) };
    (k >= 2).then_some(k)
}

/// The block shape a wide CTA's code runs.
pub fn code_shape(shape: Shape, k: u32) -> Shape {
    [shape[0] * k, shape[1], shape[2]]
}

/// The real CTA (0..k) and thread of thread `t` of a wide CTA of real
/// blocks of `shape` (`k` of them).
pub fn real_thread(shape: Shape, k: u32, t: u32) -> (u32, [u32; 3]) {
    let wide = shape[0] * k;
    let (x, rest) = (t % wide, t / wide);
    let by = shape[1].max(1);
    (x / shape[0], [x % shape[0], rest % by, rest / by])
}

/// Rewrite `f` (a kernel with its calls inlined, blocks of `shape`) to run
/// wide CTAs of `k` real ones, or say why it cannot.
pub fn rewrite(m: &Module, f: &mut Function, shape: Shape, k: u32) -> Result<(), Unsupported> {
    let bx = shape[0];
    let bids: Vec<BlockId> = f.blocks.keys().collect();
    for b in bids {
        let old = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(old.len());
        for inst in old {
            let line = inst.loc.line;
            if uses_shared(m, &inst.kind) {
                return Err(no(&format!("shared memory (PTX line {line})")));
            }
            let InstKind::ReadSpecial { dst, sreg } = inst.kind else {
                out.push(inst);
                continue;
            };
            if matches!(sreg, Special::WarpId | Special::NWarpId) {
                // The warp's index in the wide CTA is not the one in its own.
                return Err(no(&format!("%warpid (PTX line {line})")));
            }
            let rewritten = matches!(sreg, Special::Tid(0) | Special::Ntid(0) | Special::Ctaid(0));
            if !rewritten {
                out.push(inst);
                continue;
            }
            if let Some(why) = not_32_bits(f, dst, line) {
                return Err(no(&why));
            }
            let mut e = Emit {
                f: &mut *f,
                out: &mut out,
                loc: inst.loc,
                guard: inst.guard,
            };
            let v = match sreg {
                Special::Ntid(0) => Value::Imm(u64::from(bx)),
                // The column in the real CTA.
                Special::Tid(0) => {
                    let x = e.special(Special::Tid(0));
                    e.int(IntOp::And, x, Value::Imm(u64::from(bx - 1)))
                }
                // The wide CTA's index times k, plus the real CTA's place
                // in it.
                _ => {
                    let x = e.special(Special::Tid(0));
                    let w = e.special(Special::Ctaid(0));
                    let first = e.int(IntOp::MulLo, w, Value::Imm(u64::from(k)));
                    let log = u64::from(bx.trailing_zeros());
                    let kth = e.int(IntOp::Shr, x, Value::Imm(log));
                    e.int(IntOp::Add, first, kth)
                }
            };
            e.mov(dst, v);
        }
        f.blocks[b].insts = out;
    }
    Ok(())
}

/// Whether an instruction touches shared memory or asks about it.
fn uses_shared(m: &Module, k: &InstKind) -> bool {
    let shared_sym = |s: &Symbol| shared_sym(m, s);
    match k {
        InstKind::AddrOf { sym, space, .. } => shared_sym(sym) || *space == Space::Shared,
        InstKind::Ld { space, addr, .. }
        | InstKind::St { space, addr, .. }
        | InstKind::Atom { space, addr, .. } => {
            *space == Space::Shared || matches!(&addr.base, AddrBase::Symbol(s) if shared_sym(s))
        }
        InstKind::IsSpace { space, .. } | InstKind::Cvta { space, .. } => *space == Space::Shared,
        InstKind::ReadSpecial { sreg, .. } => {
            matches!(sreg, Special::DynamicSmemSize | Special::TotalSmemSize)
        }
        _ => false,
    }
}

fn no(why: &str) -> Unsupported {
    Unsupported(format!("merging CTAs: {why}"))
}

#[cfg(test)]
mod tests {
    use super::{per_cta, real_thread, rewrite};

    #[test]
    fn wide_ctas_hold_whole_warps_and_at_most_32_of_them() {
        assert_eq!(per_cta([32, 8, 1]), Some(4));
        assert_eq!(per_cta([64, 4, 1]), Some(4));
        assert_eq!(per_cta([128, 2, 2]), Some(2));
        // 320 threads: three would fit, two keep the width a power of two.
        assert_eq!(per_cta([64, 5, 1]), Some(2));
        assert_eq!(per_cta([48, 8, 1]), None);
        assert_eq!(per_cta([16, 16, 1]), None);
        assert_eq!(per_cta([32, 32, 1]), None);
    }

    #[test]
    fn threads_of_a_wide_cta_map_back_to_their_own() {
        // Blocks of 32 x 8, four to a wide CTA of 128 x 8: thread 130 is
        // column 2 of row 1, in the first real CTA.
        assert_eq!(real_thread([32, 8, 1], 4, 130), (0, [2, 1, 0]));
        assert_eq!(real_thread([32, 8, 1], 4, 127), (3, [31, 0, 0]));
        assert_eq!(real_thread([32, 8, 2], 4, 128 * 8 + 33), (1, [1, 0, 1]));
    }

    #[test]
    fn a_kernel_reading_its_warp_id_is_not_merged() {
        let src = ".version 7.0\n.target sm_80\n.address_size 64\n\
            .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n\
            ld.param.u64 %rd1, [p];\nmov.u32 %r1, %warpid;\nmov.u32 %r2, %tid.x;\n\
            mul.wide.u32 %rd2, %r2, 4;\nadd.s64 %rd2, %rd1, %rd2;\nst.global.u32 [%rd2], %r1;\nret;\n}\n";
        let m = warpfold_ptx::load(src).expect("loads");
        let (id, _) = m.kernels().next().unwrap();
        let mut f = m.functions[id].clone();
        assert!(rewrite(&m, &mut f, [32, 8, 1], 4).is_err());
        let plain = src.replace("mov.u32 %r1, %warpid;", "mov.u32 %r1, %ctaid.x;");
        let m = warpfold_ptx::load(&plain).expect("loads");
        let mut f = m.functions[id].clone();
        assert!(rewrite(&m, &mut f, [32, 8, 1], 4).is_ok());
    }
}
