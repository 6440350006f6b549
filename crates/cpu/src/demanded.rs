//! Which lanes of a register anything reads, for warp reductions that end
//! in one lane (`for (d = 16; d > 0; d /= 2) v += __shfl_down_sync(~0, v,
//! d); if (lane == 0) out[w] = v;`).
//!
//! Each `shfl.down` of such a tree is a permutation of the warp's 32
//! lanes, and its sum a vector add, where only lane 0's result is stored:
//! half the lanes of each step feed nothing. LLVM cannot tell (the store's
//! lane is a run-time choice, and each step's value has two uses), so at
//! 32 lanes every step cost two shuffles and two adds on AVX-512. Two
//! analyses tell the lowering of a constant shuffle which of its result
//! lanes nothing reads, and it leaves those lanes undefined; LLVM then
//! drops the work that only fed them (a tree of five steps: 21 vector
//! instructions became 9).
//!
//! `possible_lanes`: the lanes that may run each block. Branches on a
//! comparison of a lane's index with a constant (`(tid.x & 31) == 0`,
//! `tid.x != 0`, joined by `and`/`or`) narrow them: a register whose
//! lane i holds lane 0's value + i, lane 0's a multiple of the warp's
//! width, equals a constant in one lane at most.
//!
//! `demanded_lanes`: per register, the lanes some instruction reads.
//! Stores read the lanes that may run them; arithmetic and moves read the
//! lanes of their operands that their result is read in; a constant
//! shuffle reads its source lanes; anything else reads every lane. The
//! lanes left out are never observed: not stored, not compared, not
//! tested as a whole (a store masks lanes off, a select or a blend
//! replaces them), so any value there, undefined included, gives the same
//! result. The lowering uses them only for constant shuffles (and for
//! a store that only one lane can run, see `single_lane`). Undefined lanes
//! may reach calls of the per-lane helpers, whose declarations carry no
//! `noundef`: they compute garbage there, which nothing reads.

use crate::lanes::Lanes;
use crate::prepare::Prepared;
use std::collections::HashMap;
use warpfold_ir::*;

/// The lanes that may run each block (by id in `p.order`), as bits.
pub(crate) fn possible_lanes(p: &Prepared, forms: &[Option<Lanes>], w: u32) -> Vec<u32> {
    let all = all_lanes(w);
    let n = p.order.len();
    let mut possible = vec![0u32; n];
    if n == 0 {
        return possible;
    }
    possible[0] = all;
    let succs = |b: usize| -> Vec<(usize, u32)> {
        let block = &p.func.blocks[p.order[b]];
        let id = |t: &BlockId| p.id_of[t.0 as usize] as usize;
        match &block.term {
            Some(Terminator::Jump(t)) => vec![(id(t), all)],
            Some(Terminator::Branch {
                pred,
                negate,
                then,
                els,
            }) => {
                let (yes, no) = may(&block.insts, block.insts.len(), *pred, forms, w, 0);
                let (yes, no) = if *negate { (no, yes) } else { (yes, no) };
                vec![(id(then), yes), (id(els), no)]
            }
            _ => Vec::new(),
        }
    };
    let edges: Vec<Vec<(usize, u32)>> = (0..n).map(succs).collect();
    // Lanes only ever join, so this ends: each pass adds a lane somewhere
    // or stops.
    loop {
        let mut changed = false;
        for b in 0..n {
            for &(t, lanes) in &edges[b] {
                if t >= n {
                    continue;
                }
                let add = possible[b] & lanes;
                if possible[t] | add != possible[t] {
                    possible[t] |= add;
                    changed = true;
                }
            }
        }
        if !changed {
            return possible;
        }
    }
}

/// Per register, the lanes some instruction may read (see the module
/// comment), given the lanes that may run each block.
pub(crate) fn demanded_lanes(
    p: &Prepared,
    forms: &[Option<Lanes>],
    consts: &HashMap<Reg, u64>,
    possible: &[u32],
    w: u32,
) -> Vec<u32> {
    let all = all_lanes(w);
    let f = &p.func;
    let mut demanded = vec![0u32; f.regs.len()];
    // Uses come after definitions: walking backwards, one pass carries a
    // chain's lanes to its start; loops take more. Past the limit (a
    // kernel whose loops carry lanes round and round), every lane counts.
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        let mut add = |demanded: &mut Vec<u32>, r: Reg, lanes: u32| {
            let d = &mut demanded[r.0 as usize];
            if *d | lanes != *d {
                *d |= lanes;
                changed = true;
            }
        };
        for (id, b) in p.order.iter().enumerate().rev() {
            let block = &f.blocks[*b];
            let runs = possible[id];
            if let Some(Terminator::Branch { pred, .. }) = &block.term {
                add(&mut demanded, *pred, all);
            }
            for (k, i) in block.insts.iter().enumerate().rev() {
                // Lanes that may run the instruction.
                let here = match i.guard {
                    Some((g, neg)) => {
                        let (yes, no) = may(&block.insts, k, g, forms, w, 0);
                        runs & if neg { no } else { yes }
                    }
                    None => runs,
                };
                let reads = |v: &Value| match v {
                    Value::Reg(r) => Some(*r),
                    Value::Imm(_) => None,
                };
                match &i.kind {
                    InstKind::St { srcs, addr, .. } => {
                        for r in srcs.iter().filter_map(reads) {
                            add(&mut demanded, r, here);
                        }
                        if let AddrBase::Reg(r) = addr.base {
                            add(&mut demanded, r, all);
                        }
                    }
                    InstKind::Shfl {
                        mode,
                        dst,
                        a,
                        b,
                        c,
                        mask,
                        ..
                    } => {
                        let konst = |v: &Value| crate::uniform::known_constant(consts, v);
                        // Every lane the lowering keeps (`lower`'s
                        // `Shfl`): those of the result that something reads.
                        let d = demanded[dst.0 as usize];
                        let src = match (konst(b), konst(c)) {
                            (Some(bk), Some(ck)) if w == 32 => {
                                let (j, _) = crate::lower::shfl_lanes(*mode, bk as u32, ck as u32);
                                // A lane whose source does not take part
                                // keeps its own value.
                                (0..32)
                                    .filter(|l| d >> l & 1 == 1)
                                    .fold(d, |s, l| s | 1 << j[l])
                            }
                            _ => all,
                        };
                        if let Some(r) = reads(a) {
                            add(&mut demanded, r, src);
                        }
                        for r in [b, c, mask].into_iter().filter_map(reads) {
                            add(&mut demanded, r, all);
                        }
                    }
                    k if lane_wise(k) => {
                        let d = crate::uniform::defs(k)
                            .iter()
                            .fold(0, |s, r| s | demanded[r.0 as usize]);
                        for r in crate::uniform::uses(i) {
                            add(&mut demanded, r, d);
                        }
                    }
                    _ => {
                        for r in crate::uniform::uses(i) {
                            add(&mut demanded, r, all);
                        }
                    }
                }
                // A guarded instruction leaves the other lanes' values:
                // its guard is read in every lane.
                if let Some((g, _)) = i.guard {
                    add(&mut demanded, g, all);
                }
            }
        }
        if !changed {
            return demanded;
        }
    }
    vec![all; f.regs.len()]
}

/// Passes `demanded_lanes` makes before it gives up.
const MAX_PASSES: usize = 16;

/// The one lane that may run instruction `k` of the block with id `id`
/// (given the lanes that may run each block), if there is one.
pub(crate) fn single_lane(
    p: &Prepared,
    forms: &[Option<Lanes>],
    possible: &[u32],
    w: u32,
    (id, k): (usize, usize),
) -> Option<u32> {
    let insts = &p.func.blocks[*p.order.get(id)?].insts;
    let mut lanes = *possible.get(id)?;
    if let Some((g, neg)) = insts.get(k)?.guard {
        let (yes, no) = may(insts, k, g, forms, w, 0);
        lanes &= if neg { no } else { yes };
    }
    (lanes.count_ones() == 1).then(|| lanes.trailing_zeros())
}

/// Instructions whose result in a lane depends on their operands in that
/// lane alone, and that read no lane as a whole in compiled code.
fn lane_wise(k: &InstKind) -> bool {
    match k {
        InstKind::Mov { .. } => true,
        // The forms `lower` makes vector instructions of; others (other
        // rounding modes, narrow floats) call helpers lane by lane, which
        // read no lane they do not compute but are left out to keep this
        // list to what is plainly lane-wise.
        InstKind::Float { op, round, .. } => {
            *round == Round::Nearest
                && matches!(
                    op,
                    FloatOp::Add
                        | FloatOp::Sub
                        | FloatOp::Mul
                        | FloatOp::Fma
                        | FloatOp::Abs
                        | FloatOp::Neg
                        | FloatOp::Min { .. }
                        | FloatOp::Max { .. }
                )
        }
        InstKind::Int { op, .. } => matches!(
            op,
            IntOp::Add | IntOp::Sub | IntOp::MulLo | IntOp::And | IntOp::Or | IntOp::Xor
        ),
        _ => false,
    }
}

fn all_lanes(w: u32) -> u32 {
    if w >= 32 {
        u32::MAX
    } else {
        (1 << w) - 1
    }
}

/// The lanes where predicate `r` may hold and where it may not, as
/// defined before instruction `end` of `insts` (every lane when not
/// known).
fn may(
    insts: &[Inst],
    end: usize,
    r: Reg,
    forms: &[Option<Lanes>],
    w: u32,
    depth: u32,
) -> (u32, u32) {
    let all = all_lanes(w);
    let unknown = (all, all);
    if depth > 6 {
        return unknown;
    }
    let Some(def) = crate::lower::quiet_def(insts, end, r) else {
        return unknown;
    };
    let sub = |v: &Value| match v {
        Value::Reg(x) => may(insts, end, *x, forms, w, depth + 1),
        Value::Imm(x) if *x & 1 == 1 => (all, 0),
        Value::Imm(_) => (0, all),
    };
    match &def.kind {
        InstKind::Setp {
            cmp: cmp @ (CmpOp::Eq | CmpOp::Ne),
            ty: Ty::S32 | Ty::U32 | Ty::B32,
            dst,
            dst2,
            a,
            b,
            combine: None,
            ..
        } => {
            // Immediates only: a register `mov`ed a constant may be read
            // before the `mov` on some path.
            let lane = |v: &Value, k: &Value| -> Option<u32> {
                let (Value::Reg(x), Value::Imm(c)) = (v, k) else {
                    return None;
                };
                lane_index_form(forms.get(x.0 as usize).copied().flatten()?, w)
                    .then_some(*c as u32 % w)
            };
            let Some(l) = lane(a, b).or_else(|| lane(b, a)) else {
                return unknown;
            };
            let (eq_yes, eq_no) = (1u32 << l, all);
            let (yes, no) = if *cmp == CmpOp::Eq {
                (eq_yes, eq_no)
            } else {
                (eq_no, eq_yes)
            };
            if *dst == r {
                (yes, no)
            } else if *dst2 == Some(r) {
                (no, yes)
            } else {
                unknown
            }
        }
        InstKind::PredOp { op, a, b, .. } => {
            let (ay, an) = sub(a);
            match op {
                PredOp::Mov => (ay, an),
                PredOp::Not => (an, ay),
                PredOp::And => {
                    let (by, bn) = sub(b);
                    (ay & by, an | bn)
                }
                PredOp::Or => {
                    let (by, bn) = sub(b);
                    (ay | by, an & bn)
                }
                PredOp::Xor => unknown,
            }
        }
        _ => unknown,
    }
}

/// Whether a register of form `l` holds, in lane i, a multiple of `w`
/// plus i (modulo 2^32): `%tid.x` of one-dimensional blocks, `%laneid`,
/// `%tid.x & 31`. Then it equals a constant c in lane c mod w alone.
/// (Not `max`: it bounds the lanes that have a thread, and a block
/// shorter than the warp leaves lanes without one.)
fn lane_index_form(l: Lanes, w: u32) -> bool {
    l.stride == 1 && l.extra == 0 && l.jump == 0 && l.align >= u64::from(w)
}
