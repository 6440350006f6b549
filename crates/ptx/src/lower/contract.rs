//! Contraction of `mul` and `add`/`sub` into `fma`, as the PTX ISA allows
//! and ptxas does by default (`--fmad=true`): "mul/add sequences with no
//! rounding modifiers may be optimized to use fused-multiply-add
//! instructions on the target device". nvcc and NVRTC write `mul.f32` and
//! `add.f32` without a rounding modifier wherever they leave a product and
//! a sum unfused (and `.rn` when compiled with `--fmad=false`), so a GPU
//! runs such pairs fused; contracting them here, before either backend
//! sees the IR, gives the GPU's single rounding, and the interpreter and
//! the compiled code stay identical to each other.
//!
//! The rule is deterministic and conservative: a `mul` whose result is
//! read by exactly one `add`/`sub` later in the same block, with nothing
//! in between touching the product or the factors, and nothing else
//! reading or writing the product.

use std::cell::RefCell;
use std::collections::HashSet;
use warpfold_ir as ir;
use warpfold_ir::{BlockId, FloatOp, Inst, InstKind, Reg, Round, Terminator, Ty, Value};

/// Instructions written without a rounding modifier (`(block, index)`
/// as lowered), the only ones that may fuse.
pub(crate) type Implicit = HashSet<(BlockId, usize)>;

/// Fuse the eligible pairs of `f` (see the module comment).
pub(crate) fn contract(f: &mut ir::Function, implicit: &Implicit) {
    if implicit.is_empty() {
        return;
    }
    // Each instruction's registers, once (by block id, then position).
    let mut named = vec![Vec::new(); f.blocks.len()];
    for (b, block) in f.blocks.iter() {
        named[b.0 as usize] = block.insts.iter().map(regs_named).collect::<Vec<_>>();
    }
    let mentions = mentions(f, &named);
    let bound: HashSet<Reg> = f
        .params
        .iter()
        .chain(f.returns.iter())
        .filter_map(|p| match p.binding {
            ir::ParamBinding::Reg(r) => Some(r),
            _ => None,
        })
        .collect();
    let blocks: Vec<BlockId> = f.blocks.keys().collect();
    for b in blocks {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut fused: Vec<Option<Vec<Inst>>> = vec![None; insts.len()];
        let mut gone = vec![false; insts.len()];
        for (k, inst) in insts.iter().enumerate() {
            let Some((ty, ftz, op, x, y)) = sum(inst, implicit.contains(&(b, k))) else {
                continue;
            };
            // The first operand that is a fusable product, else the second.
            for (prod_first, other) in [(true, y), (false, x)] {
                let prod = if prod_first { x } else { y };
                let Value::Reg(t) = prod else { continue };
                if mentions[t.0 as usize] != 2 || bound.contains(&t) {
                    continue;
                }
                let at = Site {
                    b,
                    k,
                    named: &named[b.0 as usize],
                    gone: &gone,
                };
                let Some(m) = product_of(&insts, &at, t, ty, ftz, implicit) else {
                    continue;
                };
                let InstKind::Float { args, .. } = &insts[m].kind else {
                    continue;
                };
                let (a, c) = (args[0], args[1]);
                // x + t = fma(a, c, x); t - y = fma(a, c, -y); x - t = fma(-a, c, x).
                let mut out = Vec::new();
                let mut negated = |v: Value, f: &mut ir::Function| -> Value {
                    match v {
                        Value::Imm(bits) => Value::Imm(bits ^ sign_bit(ty)),
                        Value::Reg(_) => {
                            let r = f.regs.push(ir::RegInfo {
                                name: format!("%fmad{}", f.regs.len()),
                                ty,
                            });
                            out.push(Inst {
                                kind: InstKind::Float {
                                    op: FloatOp::Neg,
                                    ty,
                                    dst: r,
                                    args: vec![v],
                                    round: Round::Nearest,
                                    ftz: false,
                                    sat: false,
                                },
                                guard: inst.guard,
                                loc: inst.loc,
                            });
                            Value::Reg(r)
                        }
                    }
                };
                let (a, addend) = match (op, prod_first) {
                    (FloatOp::Add, _) => (a, other),
                    (_, true) => (a, negated(other, f)),
                    (_, false) => (negated(a, f), other),
                };
                let InstKind::Float { dst, .. } = inst.kind else {
                    continue;
                };
                out.push(Inst {
                    kind: InstKind::Float {
                        op: FloatOp::Fma,
                        ty,
                        dst,
                        args: vec![a, c, addend],
                        round: Round::Nearest,
                        ftz,
                        sat: false,
                    },
                    guard: inst.guard,
                    loc: inst.loc,
                });
                fused[k] = Some(out);
                gone[m] = true;
                break;
            }
        }
        let mut kept = Vec::with_capacity(insts.len());
        for (k, inst) in insts.into_iter().enumerate() {
            match fused[k].take() {
                Some(new) => kept.extend(new),
                None if gone[k] => {}
                None => kept.push(inst),
            }
        }
        f.blocks[b].insts = kept;
    }
}

fn sign_bit(ty: Ty) -> u64 {
    if ty == Ty::F64 {
        1 << 63
    } else {
        1 << 31
    }
}

/// An unsaturated `add`/`sub` without rounding modifier: (type, ftz, op,
/// operands).
fn sum(inst: &Inst, implicit: bool) -> Option<(Ty, bool, FloatOp, Value, Value)> {
    match &inst.kind {
        InstKind::Float {
            op: op @ (FloatOp::Add | FloatOp::Sub),
            ty: ty @ (Ty::F32 | Ty::F64),
            args,
            ftz,
            sat: false,
            ..
        } if implicit && args.len() == 2 => Some((*ty, *ftz, *op, args[0], args[1])),
        _ => None,
    }
}

/// Where a sum is: block `b`, position `k`, the registers each of the
/// block's instructions names, and the products already fused.
struct Site<'a> {
    b: BlockId,
    k: usize,
    named: &'a [Vec<Reg>],
    gone: &'a [bool],
}

/// The index of the unguarded `mul` of the same kind before the sum at
/// `at` in its block that writes `t` (read by nothing else: see
/// `mentions`), if nothing between them names its factors (so they still
/// hold their values at the sum).
fn product_of(
    insts: &[Inst],
    at: &Site,
    t: Reg,
    ty: Ty,
    ftz: bool,
    implicit: &Implicit,
) -> Option<usize> {
    let m = (0..at.k).rev().find(
        |&m| matches!(&insts[m].kind, InstKind::Float { op: FloatOp::Mul, dst, .. } if *dst == t),
    )?;
    let InstKind::Float {
        ty: mty,
        args,
        ftz: mftz,
        sat,
        ..
    } = &insts[m].kind
    else {
        return None;
    };
    let ok = *mty == ty
        && *mftz == ftz
        && !*sat
        && insts[m].guard.is_none()
        && implicit.contains(&(at.b, m))
        && !at.gone[m]
        && args.len() == 2
        && (m + 1..at.k).all(|j| {
            args.iter().all(|a| match a {
                Value::Reg(r) => !at.named[j].contains(r),
                Value::Imm(_) => true,
            })
        });
    ok.then_some(m)
}

/// The registers `inst` names: operands, results and guard.
fn regs_named(inst: &Inst) -> Vec<Reg> {
    let regs = RefCell::new(Vec::new());
    let mut kind = inst.kind.clone();
    ir::inline::remap(
        &mut kind,
        &|x| {
            regs.borrow_mut().push(x);
            x
        },
        &|l| l,
    );
    let mut regs = regs.into_inner();
    regs.extend(inst.guard.map(|(g, _)| g));
    regs
}

/// How many times each register is named in `f` (by its instructions,
/// `named`, and its branch conditions).
fn mentions(f: &ir::Function, named: &[Vec<Vec<Reg>>]) -> Vec<u32> {
    let mut counts = vec![0u32; f.regs.len()];
    let regs = named.iter().flatten().flatten().copied();
    let conds = f.blocks.values().filter_map(|b| match b.term {
        Some(Terminator::Branch { pred, .. }) => Some(pred),
        _ => None,
    });
    for r in regs.chain(conds) {
        if let Some(c) = counts.get_mut(r.0 as usize) {
            *c += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use warpfold_ir::{FloatOp, InstKind};

    /// The float operations of a kernel with `body` (registers %f1..%f9,
    /// %p1 declared; %f1..%f3 loaded), in order, after loading with
    /// `fmad`.
    fn ops(body: &str, fmad: bool) -> Vec<String> {
        let src = format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n\
             .reg .f32 %f<10>;\n.reg .f64 %fd<4>;\n.reg .pred %p<2>;\n.reg .b64 %rd<2>;\n\
             ld.param.u64 %rd1, [p];\n\
             ld.global.f32 %f1, [%rd1];\nld.global.f32 %f2, [%rd1+4];\nld.global.f32 %f3, [%rd1+8];\n\
             setp.gt.f32 %p1, %f1, 0f00000000;\n\
             {body}\nst.global.f32 [%rd1], %f9;\nret;\n}}\n"
        );
        let m = crate::load_with(&src, fmad).expect("loads");
        let f = m.functions.values().next().unwrap();
        let mut out = Vec::new();
        for b in f.blocks.values() {
            for i in &b.insts {
                if let InstKind::Float { op, .. } = &i.kind {
                    out.push(match op {
                        FloatOp::Add => "add",
                        FloatOp::Sub => "sub",
                        FloatOp::Mul => "mul",
                        FloatOp::Fma => "fma",
                        FloatOp::Neg => "neg",
                        _ => "other",
                    });
                }
            }
        }
        out.into_iter().map(String::from).collect()
    }

    #[test]
    fn a_product_read_once_by_a_sum_fuses() {
        assert_eq!(
            ops("mul.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;", true),
            ["fma"]
        );
        assert_eq!(
            ops("mul.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f3, %f4;", true),
            ["fma"]
        );
        assert_eq!(
            ops("mul.f32 %f4, %f1, %f2;\nsub.f32 %f9, %f4, %f3;", true),
            ["neg", "fma"]
        );
        assert_eq!(
            ops("mul.f32 %f4, %f1, %f2;\nsub.f32 %f9, %f3, %f4;", true),
            ["neg", "fma"]
        );
        // A constant is negated in place.
        assert_eq!(
            ops(
                "mul.f32 %f4, %f1, %f2;\nsub.f32 %f9, %f4, 0f3F800000;",
                true
            ),
            ["fma"]
        );
        // Independent work in between does not matter; ftz on both is kept.
        assert_eq!(
            ops(
                "mul.ftz.f32 %f4, %f1, %f2;\nadd.f32 %f5, %f3, %f3;\nadd.ftz.f32 %f9, %f4, %f5;",
                true
            ),
            ["add", "fma"]
        );
        let f64 = "cvt.f64.f32 %fd1, %f1;\nmul.f64 %fd2, %fd1, %fd1;\nadd.f64 %fd3, %fd2, %fd1;\ncvt.rn.f32.f64 %f9, %fd3;";
        assert_eq!(ops(f64, true), ["fma"]);
    }

    #[test]
    fn products_and_sums_that_must_round_alone_stay_apart() {
        let apart = |body: &str| {
            let ops = ops(body, true);
            assert!(!ops.contains(&"fma".to_string()), "{body}: {ops:?}");
        };
        // Explicit rounding on either, saturation, differing ftz.
        apart("mul.rn.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;");
        apart("mul.f32 %f4, %f1, %f2;\nadd.rn.f32 %f9, %f4, %f3;");
        apart("mul.f32 %f4, %f1, %f2;\nadd.sat.f32 %f9, %f4, %f3;");
        apart("mul.sat.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;");
        apart("mul.ftz.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;");
        // The product read twice, or written again.
        apart("mul.f32 %f4, %f1, %f2;\nadd.f32 %f5, %f4, %f3;\nadd.f32 %f9, %f5, %f4;");
        apart("mul.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;\nmov.f32 %f4, %f3;\nst.global.f32 [%rd1+4], %f4;");
        // A factor written between the two.
        apart("mul.f32 %f4, %f1, %f2;\nmov.f32 %f1, %f3;\nadd.f32 %f9, %f4, %f3;");
        // A guarded product; a sum in another block.
        apart("@%p1 mul.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;");
        apart("mul.f32 %f4, %f1, %f2;\n@%p1 bra L;\nL:\nadd.f32 %f9, %f4, %f3;");
        // Off: nothing fuses.
        assert_eq!(
            ops("mul.f32 %f4, %f1, %f2;\nadd.f32 %f9, %f4, %f3;", false),
            ["mul", "add"]
        );
    }

    #[test]
    fn a_guarded_sum_fuses_under_its_guard() {
        let src = ".version 7.0\n.target sm_80\n.address_size 64\n\
            .visible .entry k(.param .u64 p)\n{\n.reg .f32 %f<10>;\n.reg .pred %p<2>;\n.reg .b64 %rd<2>;\n\
            ld.param.u64 %rd1, [p];\nld.global.f32 %f1, [%rd1];\nmov.f32 %f9, %f1;\n\
            setp.gt.f32 %p1, %f1, 0f00000000;\nmul.f32 %f4, %f1, %f1;\n@%p1 sub.f32 %f9, %f1, %f4;\n\
            st.global.f32 [%rd1], %f9;\nret;\n}\n";
        let m = crate::load(src).expect("loads");
        let f = m.functions.values().next().unwrap();
        let fused: Vec<_> = f
            .blocks
            .values()
            .flat_map(|b| b.insts.iter())
            .filter(|i| matches!(i.kind, InstKind::Float { .. }))
            .map(|i| {
                (
                    matches!(
                        i.kind,
                        InstKind::Float {
                            op: FloatOp::Fma,
                            ..
                        }
                    ),
                    i.guard.is_some(),
                )
            })
            .collect();
        // The negation and the fma, both under the sum's guard.
        assert_eq!(fused, [(false, true), (true, true)]);
    }
}
