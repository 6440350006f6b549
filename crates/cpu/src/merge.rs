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
//! multiple of 32, so no warp spans two real CTAs) and no shared memory
//! (each real CTA would need its own).

use crate::lanes::Shape;
use crate::prepare::Unsupported;
use warpfold_ir::*;

/// Real CTAs per wide CTA for blocks of `shape`, if merging can apply.
pub fn per_cta(shape: Shape) -> Option<u32> {
    let n = shape.iter().try_fold(1u32, |a, &d| a.checked_mul(d))?;
    if !shape[0].is_power_of_two() || shape[0] % 32 != 0 || n == 0 {
        return None;
    }
    // The driver's tables hold 32 warps; four CTAs covered the stencil's
    // rows.
    let k = (1024 / n).min(4);
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
            let rewritten = matches!(sreg, Special::Tid(0) | Special::Ntid(0) | Special::Ctaid(0));
            if !rewritten {
                out.push(inst);
                continue;
            }
            if f.regs[dst].ty.bits() != 32 {
                return Err(no(&format!(
                    "a special register read into a {}-bit register (PTX line {line})",
                    f.regs[dst].ty.bits()
                )));
            }
            let at = |kind| Inst {
                kind,
                guard: None,
                loc: inst.loc,
            };
            let int = |op, dst, a, b| {
                at(InstKind::Int {
                    op,
                    ty: Ty::U32,
                    dst,
                    args: vec![a, b],
                })
            };
            let mov = |src| Inst {
                kind: InstKind::Mov {
                    ty: Ty::U32,
                    dst,
                    src,
                },
                guard: inst.guard,
                loc: inst.loc,
            };
            if sreg == Special::Ntid(0) {
                out.push(mov(Value::Imm(u64::from(bx))));
                continue;
            }
            let x = temp(f);
            out.push(at(InstKind::ReadSpecial {
                dst: x,
                sreg: Special::Tid(0),
            }));
            if sreg == Special::Tid(0) {
                // The column in the real CTA.
                let t = temp(f);
                out.push(int(
                    IntOp::And,
                    t,
                    Value::Reg(x),
                    Value::Imm(u64::from(bx - 1)),
                ));
                out.push(mov(Value::Reg(t)));
                continue;
            }
            // The wide CTA's index times k, plus the real CTA's place in it.
            let (w, first, kth, c) = (temp(f), temp(f), temp(f), temp(f));
            out.push(at(InstKind::ReadSpecial {
                dst: w,
                sreg: Special::Ctaid(0),
            }));
            out.push(int(
                IntOp::MulLo,
                first,
                Value::Reg(w),
                Value::Imm(u64::from(k)),
            ));
            let log = u64::from(bx.trailing_zeros());
            out.push(int(IntOp::Shr, kth, Value::Reg(x), Value::Imm(log)));
            out.push(int(IntOp::Add, c, Value::Reg(first), Value::Reg(kth)));
            out.push(mov(Value::Reg(c)));
        }
        f.blocks[b].insts = out;
    }
    Ok(())
}

/// Whether an instruction touches shared memory or asks about it.
fn uses_shared(m: &Module, k: &InstKind) -> bool {
    let shared_sym = |s: &Symbol| matches!(s, Symbol::Global(g) if m.globals.get(*g).is_some_and(|g| g.space == Space::Shared));
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

fn temp(f: &mut Function) -> Reg {
    let name = format!("%wf_merge{}", f.regs.len());
    f.regs.push(RegInfo { name, ty: Ty::U32 })
}

fn no(why: &str) -> Unsupported {
    Unsupported(format!("merging CTAs: {why}"))
}
