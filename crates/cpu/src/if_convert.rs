//! If-conversion: small if-then triangles and if-then-else diamonds whose
//! condition differs between threads become guarded instructions in the
//! block before them, and the blocks after join it.
//!
//! A divergent branch costs the compiled code a run-time test of which
//! lanes go where, a walk through the body with a mask, and a rejoin (some
//! 30 instructions, with registers kept in memory around the blocks). A
//! body of a few arithmetic instructions costs less run for every lane and
//! blended by the guard, which the backend does for PTX's own `@p`
//! instructions. Batched LU's back substitution is 16 such triangles
//! (`if (i == k) xi = y / a[k]`) between shuffles; with them gone the
//! kernel is one straight block.
//!
//! Only pure instructions (`lanes::pure`: no memory, no collectives, no
//! clock) and non-volatile loads and stores move: run by lanes the branch
//! would have sent elsewhere, their results are dropped by the guard and
//! nothing else changes; a guarded load reads nothing for those lanes (a
//! masked load), a guarded store writes nothing for them (a masked store),
//! and the stores keep their places among the warp's accesses. A bitonic
//! sort's compare-exchange (`if (a > b) { s[i] = b; s[j] = a; }`) is such
//! an arm: 4.6 -> 3.5 ms for 256 segments on one worker.
//! Loads move only where what they load is read after the arm, and what
//! only the arm reads is computed unguarded (see `absorb`). Branches on
//! values the same in every thread stay: a uniform branch is one scalar
//! test, and a guarded definition would cost the register its scalar form.
//! `WARPFOLD_IF_CONVERT=off` turns this off.

use crate::uniform::{defs, uses};
use warpfold_ir::*;

/// Most instructions a converted body (both arms of a diamond) may hold:
/// lanes the branch would skip pay for all of them.
const MAX_BODY: usize = 24;

/// Branches converted, over every preparation of every kernel (a kernel
/// is prepared twice per compilation): for tests that a kernel takes
/// this path.
pub(crate) static CONVERTED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Whether `WARPFOLD_IF_CONVERT` leaves this on (read once: both
/// preparations of a kernel must convert alike).
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WARPFOLD_IF_CONVERT").map_or(true, |v| v != "off"))
}

/// Convert what qualifies in `f`, whose blocks run in `layout` order, and
/// return the new order (converted and joined blocks leave it).
pub(crate) fn run(f: &mut Function, mut layout: Vec<BlockId>) -> Vec<BlockId> {
    if !enabled() {
        return layout;
    }
    // Blocks no path reaches (after a `bra.uni`) would count as
    // predecessors; `prepare` drops them from the order anyway.
    crate::prepare::keep_reached(f, &mut layout);
    let varying = varying_regs(f);
    let mut preds = vec![0u32; f.blocks.len()];
    for b in &layout {
        for s in crate::lanes::succs(&f.blocks[*b]) {
            preds[s.0 as usize] += 1;
        }
    }
    // Again until nothing changes: an if whose arm held an inner if that
    // became one block may qualify now.
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < layout.len() {
            // A converted block then ends with its join's terminator, which
            // may be the next branch of a chain.
            while convert_at(f, &mut layout, &mut preds, i, &varying) {
                CONVERTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                join_next(f, &mut layout, &preds, i);
                changed = true;
            }
            i += 1;
        }
        if !changed {
            return layout;
        }
    }
}

/// Convert the triangle or diamond that starts at `layout[i]`, if any.
fn convert_at(
    f: &mut Function,
    layout: &mut Vec<BlockId>,
    preds: &mut [u32],
    i: usize,
    varying: &[bool],
) -> bool {
    let b = layout[i];
    let Some(Terminator::Branch {
        pred,
        negate,
        then,
        els,
    }) = f.blocks[b].term.clone()
    else {
        return false;
    };
    if then == els || !varying.get(pred.0 as usize).copied().unwrap_or(true) {
        return false;
    }
    let at = |k: usize| layout.get(i + k).copied();
    // The guard under which the branch sends a lane to `x`.
    let guard = |x: BlockId| (pred, if x == then { negate } else { !negate });
    // The arm's `arm_local` registers, when `x` qualifies as an arm
    // joining at `join` (computed once: `absorb` needs them too, and the
    // other arm of a diamond moving first changes none of them).
    let arm = |x: BlockId, join: BlockId| {
        let blk = &f.blocks[x];
        let shape = x != f.entry
            && preds[x.0 as usize] == 1
            && blk.term == Some(Terminator::Jump(join))
            && movable(&blk.insts, pred);
        let local = shape.then(|| arm_local(f, x))?;
        loads_leave(&blk.insts, &local).then_some(local)
    };
    // Triangle: B, T, F in order; B goes to T or F, T to F.
    if let (Some(t), Some(j)) = (at(1), at(2)) {
        let to_both = (then == t && els == j) || (then == j && els == t);
        let local = (to_both && cost(&f.blocks[t].insts) <= MAX_BODY)
            .then(|| arm(t, j))
            .flatten();
        if let Some(local) = local {
            absorb(f, b, t, guard(t), &local);
            f.blocks[b].term = Some(Terminator::Jump(j));
            preds[j.0 as usize] -= 1;
            layout.remove(i + 1);
            return true;
        }
    }
    // Diamond: B, T, E, F in order; B goes to T or E, both to F.
    if let (Some(t), Some(e), Some(j)) = (at(1), at(2), at(3)) {
        let to_both = (then == t && els == e) || (then == e && els == t);
        let small = cost(&f.blocks[t].insts) + cost(&f.blocks[e].insts) <= MAX_BODY;
        let locals = (to_both && small)
            .then(|| arm(t, j).zip(arm(e, j)))
            .flatten();
        if let Some((lt, le)) = locals {
            let (gt, ge) = (guard(t), guard(e));
            absorb(f, b, t, gt, &lt);
            absorb(f, b, e, ge, &le);
            f.blocks[b].term = Some(Terminator::Jump(j));
            preds[j.0 as usize] -= 1;
            layout.drain(i + 1..i + 3);
            return true;
        }
    }
    false
}

/// Instructions `insts` become when guarded: an already guarded one
/// takes up to three more for its predicate of both guards.
fn cost(insts: &[Inst]) -> usize {
    insts
        .iter()
        .map(|i| if i.guard.is_some() { 4 } else { 1 })
        .sum()
}

/// Whether `insts` may run guarded by `pred`: pure, or non-volatile loads
/// and stores, and leaving `pred` as it is (the guards after them read it).
fn movable(insts: &[Inst], pred: Reg) -> bool {
    insts.iter().all(|i| {
        (crate::lanes::pure(&i.kind) || guarded_access(&i.kind))
            // A carry chain's hidden flag is not a register a guard blends.
            && !matches!(i.kind, InstKind::Carry { .. })
            && !defs(&i.kind).contains(&pred)
    })
}

/// Whether every load among an arm's `insts` loads registers whose values
/// may leave the arm (not in `local`, its `arm_local` registers: read
/// after it, or read in it before it defines them for every lane).
/// A guarded load keeps the old value of the lanes it skips, so a value
/// only the arm reads would still be carried from one run of the block to
/// the next for them: in a loop, a register live around it, blended and
/// saved on every trip (a 3-D stencil's six neighbour loads ran 3x
/// slower). A value read after the join is carried there anyway.
fn loads_leave(insts: &[Inst], local: &[bool]) -> bool {
    // (Parameters read by name run unguarded: see `absorb`.)
    let guarded = |k: &InstKind| matches!(k, InstKind::Ld { .. }) && !named_param(k);
    insts.iter().all(|i| match &i.kind {
        InstKind::Ld { dsts, .. } if guarded(&i.kind) => {
            dsts.iter().flatten().all(|d| !local[d.0 as usize])
        }
        _ => true,
    })
}

/// Move `from`'s instructions to the end of `to`, guarded by `guard`;
/// one with a guard of its own (an inner if converted before) gets a
/// fresh predicate of both, computed just before it (the inner guard's
/// register may change within the arm). A pure instruction whose results
/// only the arm reads stays unguarded (`arm_local`): lanes that skip the
/// arm never read them, and an address computed so keeps its lane form
/// (a guarded definition would cost it), so a load moved with it is one
/// masked vector access.
fn absorb(f: &mut Function, to: BlockId, from: BlockId, guard: (Reg, bool), local: &[bool]) {
    let insts = std::mem::take(&mut f.blocks[from].insts);
    f.blocks[from].term = None;
    let mut moved = Vec::with_capacity(insts.len());
    for mut inst in insts {
        let unguarded = inst.guard.is_none()
            && (crate::lanes::pure(&inst.kind) || named_param(&inst.kind))
            && defs(&inst.kind).iter().all(|d| local[d.0 as usize]);
        if !unguarded {
            let both = match inst.guard {
                Some(inner) => (both_hold(f, guard, inner, inst.loc, &mut moved), false),
                None => guard,
            };
            inst.guard = Some(both);
        }
        moved.push(inst);
    }
    f.blocks[to].insts.extend(moved);
}

/// Per register: whether block `arm` alone reads it, and only after
/// defining it there for every lane (so its value never leaves the arm).
/// A guarded definition (PTX's own `@p`, or an inner if converted before)
/// keeps the old value where its guard is off: a read after it may see a
/// value from outside the arm, so it defines nothing here.
fn arm_local(f: &Function, arm: BlockId) -> Vec<bool> {
    let n = f.regs.len();
    let mut defined = vec![false; n];
    let mut local = vec![true; n];
    for (bid, b) in f.blocks.iter() {
        let here = bid == arm;
        for i in &b.insts {
            for r in uses(i) {
                if !here || !defined[r.0 as usize] {
                    local[r.0 as usize] = false;
                }
            }
            if here && !crate::uniform::partial_def(i) {
                for d in defs(&i.kind) {
                    defined[d.0 as usize] = true;
                }
            }
        }
        if let Some(Terminator::Branch { pred, .. }) = &b.term {
            local[pred.0 as usize] = false;
        }
    }
    (0..n).map(|r| local[r] && defined[r]).collect()
}

/// A fresh predicate register holding where guards `a` and `b` both hold,
/// computed by instructions pushed to `out`.
fn both_hold(
    f: &mut Function,
    a: (Reg, bool),
    b: (Reg, bool),
    loc: SrcLoc,
    out: &mut Vec<Inst>,
) -> Reg {
    let fresh = |f: &mut Function| {
        let name = format!("%if_guard{}", f.regs.len());
        f.regs.push(RegInfo { name, ty: Ty::Pred })
    };
    let mut op = |op: PredOp, dst: Reg, x: Value, y: Value| {
        out.push(Inst {
            kind: InstKind::PredOp {
                op,
                dst,
                a: x,
                b: y,
            },
            guard: None,
            loc,
        })
    };
    let mut holds = |f: &mut Function, (r, negated): (Reg, bool)| {
        if !negated {
            return Value::Reg(r);
        }
        let t = fresh(f);
        op(PredOp::Not, t, Value::Reg(r), Value::Imm(0));
        Value::Reg(t)
    };
    let (x, y) = (holds(f, a), holds(f, b));
    let both = fresh(f);
    op(PredOp::And, both, x, y);
    both
}

/// After a conversion at `layout[i]`: when the join follows it and is
/// reached from nowhere else, its instructions and terminator join the
/// block.
fn join_next(f: &mut Function, layout: &mut Vec<BlockId>, preds: &[u32], i: usize) {
    let b = layout[i];
    let Some(&j) = layout.get(i + 1) else { return };
    if f.blocks[b].term != Some(Terminator::Jump(j)) || preds[j.0 as usize] != 1 || j == f.entry {
        return;
    }
    let insts = std::mem::take(&mut f.blocks[j].insts);
    let term = f.blocks[j].term.take();
    f.blocks[b].insts.extend(insts);
    f.blocks[b].term = term;
    layout.remove(i + 1);
}

/// Registers whose value may differ between the threads of a CTA: those
/// from per-thread special registers, memory (but kernel parameters and
/// constants), atomics and collectives, with more than one definition
/// (which lanes ran which one can differ), or computed from such.
fn varying_regs(f: &Function) -> Vec<bool> {
    let mut varying: Vec<bool> = crate::uniform::def_counts(f)
        .iter()
        .map(|&c| c > 1)
        .collect();
    loop {
        let mut changed = false;
        for b in f.blocks.values() {
            for i in &b.insts {
                let source = match &i.kind {
                    InstKind::ReadSpecial { sreg, .. } => !matches!(
                        sreg,
                        Special::Ntid(_)
                            | Special::Ctaid(_)
                            | Special::Nctaid(_)
                            | Special::NWarpId
                            | Special::NSmId
                            | Special::GridId
                            | Special::DynamicSmemSize
                            | Special::TotalSmemSize
                    ),
                    InstKind::Ld {
                        space: Space::Param | Space::Const,
                        volatile: false,
                        ..
                    } => false,
                    k => !crate::lanes::pure(k),
                };
                if !source && !uses(i).iter().any(|r| varying[r.0 as usize]) {
                    continue;
                }
                for d in defs(&i.kind) {
                    if !std::mem::replace(&mut varying[d.0 as usize], true) {
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return varying;
        }
    }
}

/// A kernel parameter or constant read by its name: the same for every
/// lane, and it cannot fault, so it may run for every lane.
fn named_param(k: &InstKind) -> bool {
    matches!(k, InstKind::Ld { space, addr, volatile: false, .. } if crate::lower::uniform_symbol(addr, *space))
}

/// Whether memory access `k` may run guarded: a plain (not volatile) load
/// or store. Guarded, a load reads and a store writes for the lanes the
/// branch would have sent into the arm and no others, in the same place
/// among the warp's other accesses, so memory ends up as after the branch.
fn guarded_access(k: &InstKind) -> bool {
    matches!(
        k,
        InstKind::Ld {
            volatile: false,
            ..
        } | InstKind::St {
            volatile: false,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

    fn converted(body: &str) -> (Function, Vec<BlockId>) {
        let src =
            format!("{HEAD}.visible .entry k(.param .u64 out, .param .u32 n)\n{{\n{body}\n}}\n");
        let m = warpfold_ptx::load(&src).expect("parses");
        let (k, _) = m.kernels().next().expect("kernel");
        let (mut f, layout) = warpfold_ir::inline::inline_calls(&m, k, None).expect("inlines");
        let layout = run(&mut f, layout);
        (f, layout)
    }

    const REGS: &str = ".reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<4>;\n";

    #[test]
    fn divergent_triangles_and_diamonds_become_one_block() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.f32 %f1, 0f3F800000;\n\
             setp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n\
             div.rn.f32 %f1, %f1, 0f40000000;\nadd.f32 %f2, %f1, %f1;\n\
             L1:\nsetp.lt.s32 %p2, %r1, 5;\n@%p2 bra L2;\n\
             mul.f32 %f1, %f1, %f1;\nbra.uni L3;\n\
             L2:\nadd.f32 %f1, %f1, 0f40000000;\n\
             L3:\nld.param.u64 %rd1, [out];\nst.global.f32 [%rd1], %f1;\nret;"
        ));
        assert_eq!(layout.len(), 1, "{:?}", layout);
        let guards: Vec<_> = f.blocks[layout[0]]
            .insts
            .iter()
            .filter_map(|i| i.guard)
            .collect();
        // The triangle's body runs where the branch falls through (!%p1),
        // the diamond's arms under !%p2 and %p2. The triangle's `add`
        // writes %f2, which nothing after the arm reads: unguarded.
        assert_eq!(guards.len(), 3);
        assert_eq!(guards[0].1, true);
        assert_eq!((guards[1].1, guards[2].1), (true, false));
        let add = f.blocks[layout[0]]
            .insts
            .iter()
            .find(|i| matches!(i.kind, InstKind::Float { op: FloatOp::Add, dst, .. } if f.regs[dst].name == "%f2"))
            .expect("the triangle's add");
        assert!(add.guard.is_none());
    }

    /// `s[t] = i < n ? in[i] : 0` as NVRTC writes it: a triangle around
    /// the load. The load moves guarded (lanes past `n` read nothing); the
    /// address only the arm reads is computed unguarded (keeping its lane
    /// form), and so is the parameter it reads by name; the loaded
    /// register, read after the join, is guarded.
    #[test]
    fn a_load_moves_guarded_and_its_address_unguarded() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [n];\nmov.f32 %f1, 0f00000000;\n\
             setp.ge.s32 %p1, %r1, %r2;\n@%p1 bra L1;\n\
             ld.param.u64 %rd1, [out];\nmul.wide.s32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
             ld.global.f32 %f1, [%rd3];\n\
             L1:\nld.param.u64 %rd0, [out];\nst.global.f32 [%rd0], %f1;\nret;"
        ));
        assert_eq!(layout.len(), 1, "{:?}", layout);
        let insts = &f.blocks[layout[0]].insts;
        let at = |pred: &dyn Fn(&InstKind) -> bool| insts.iter().find(|i| pred(&i.kind)).unwrap();
        let ld = at(&|k| {
            matches!(
                k,
                InstKind::Ld {
                    space: Space::Global,
                    ..
                }
            )
        });
        assert_eq!(ld.guard.map(|g| g.1), Some(true));
        let mul = at(&|k| {
            matches!(
                k,
                InstKind::Int {
                    op: IntOp::MulWide,
                    ..
                }
            )
        });
        assert!(mul.guard.is_none());
        let guarded = insts.iter().filter(|i| i.guard.is_some()).count();
        assert_eq!(guarded, 1);
    }

    /// A load whose value only its arm reads keeps its branch (guarded,
    /// it would carry the skipped lanes' old values from trip to trip).
    #[test]
    fn a_load_only_its_arm_reads_stays_behind_its_branch() {
        let (_, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.f32 %f1, 0f00000000;\n\
             setp.ge.s32 %p1, %r1, 4;\n@%p1 bra L1;\n\
             ld.param.u64 %rd1, [out];\nld.global.f32 %f2, [%rd1];\nadd.f32 %f1, %f2, %f2;\n\
             L1:\nld.param.u64 %rd0, [out];\nst.global.f32 [%rd0], %f1;\nret;"
        ));
        assert_eq!(layout.len(), 3);
    }

    /// The arm reads %r5 after an inner `@p` definition (which may keep
    /// the value from before the arm) and then sets it: that last write
    /// stays guarded, since lanes that skip the arm may read %r5 on the
    /// next trip.
    #[test]
    fn a_write_after_an_inner_guard_stays_guarded() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.u32 %r5, 10;\nsetp.gt.u32 %p3, %r1, 1000;\n\
             setp.eq.s32 %p1, %r1, 1;\n@%p1 bra L1;\n\
             @%p3 mov.u32 %r5, 1;\nadd.s32 %r6, %r5, 1;\nmov.u32 %r5, 2;\n\
             L1:\nld.param.u64 %rd0, [out];\nst.global.u32 [%rd0], %r6;\nret;"
        ));
        assert_eq!(layout.len(), 1, "{:?}", layout);
        let last = f.blocks[layout[0]]
            .insts
            .iter()
            .rfind(|i| matches!(i.kind, InstKind::Mov { .. }))
            .unwrap();
        assert!(last.guard.is_some(), "{last:?}");
    }

    /// A diamond whose else arm reads what the then arm writes: lanes of
    /// the else arm must see the value from before, so the then arm's
    /// write stays guarded although nothing after the join reads it.
    #[test]
    fn a_write_the_other_arm_reads_stays_guarded() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.u32 %r6, 7;\n\
             setp.lt.s32 %p1, %r1, 5;\n@%p1 bra L2;\n\
             mov.u32 %r6, 1;\nadd.s32 %r7, %r6, 1;\nbra.uni L3;\n\
             L2:\nadd.s32 %r7, %r6, 2;\n\
             L3:\nld.param.u64 %rd0, [out];\nst.global.u32 [%rd0], %r7;\nret;"
        ));
        assert_eq!(layout.len(), 1, "{:?}", layout);
        let insts = &f.blocks[layout[0]].insts;
        let write = insts
            .iter()
            .find(|i| matches!(i.kind, InstKind::Mov { dst, .. } if f.regs[dst].name == "%r6" && i.guard.is_some()));
        assert!(write.is_some(), "the then arm's %r6 = 1 ran unguarded");
    }

    /// A volatile load keeps its branch: other threads may see the order
    /// of its accesses.
    #[test]
    fn a_volatile_load_stays_behind_its_branch() {
        let (_, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.f32 %f1, 0f00000000;\n\
             setp.ge.s32 %p1, %r1, 4;\n@%p1 bra L1;\n\
             ld.param.u64 %rd1, [out];\nld.volatile.global.f32 %f1, [%rd1];\n\
             L1:\nld.param.u64 %rd0, [out];\nst.global.f32 [%rd0], %f1;\nret;"
        ));
        assert_eq!(layout.len(), 3);
    }

    #[test]
    fn an_if_inside_an_if_runs_under_both_guards() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nmov.f32 %f1, 0f3F800000;\nmov.f32 %f2, %f1;\n\
             setp.lt.s32 %p1, %r1, 8;\n@%p1 bra L1;\n\
             add.f32 %f1, %f1, %f1;\nsetp.eq.s32 %p2, %r1, 12;\n@%p2 bra L2;\n\
             mul.f32 %f2, %f1, %f1;\nL2:\nadd.f32 %f2, %f2, %f1;\n\
             L1:\nld.param.u64 %rd1, [out];\nst.global.f32 [%rd1], %f2;\nret;"
        ));
        assert_eq!(layout.len(), 1, "{:?}", layout);
        let insts = &f.blocks[layout[0]].insts;
        let mul = insts
            .iter()
            .position(|i| {
                matches!(
                    i.kind,
                    InstKind::Float {
                        op: FloatOp::Mul,
                        ..
                    }
                )
            })
            .expect("the inner body");
        // Its guard is a fresh predicate: !%p1 and !%p2, computed just
        // before it.
        let (g, negated) = insts[mul].guard.expect("guarded");
        assert!(!negated && f.regs[g].name.starts_with("%if_guard"));
        assert!(matches!(
            insts[mul - 1].kind,
            InstKind::PredOp { op: PredOp::And, dst, .. } if dst == g
        ));
        // The others run under !%p1 alone.
        let outer: Vec<_> = insts[mul + 1..]
            .iter()
            .take_while(|i| i.guard.is_some())
            .map(|i| i.guard.unwrap().1)
            .collect();
        assert_eq!(outer, vec![true]);
    }

    #[test]
    fn stores_run_guarded() {
        let (f, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n\
             ld.param.u64 %rd1, [out];\nst.global.u32 [%rd1], %r1;\nst.global.u32 [%rd1+4], 7;\nL1:\nret;"
        ));
        assert_eq!(layout.len(), 1, "{layout:?}");
        let stores: Vec<_> = f.blocks[layout[0]]
            .insts
            .iter()
            .filter(|i| matches!(i.kind, InstKind::St { .. }))
            .collect();
        // Both, in their order, where the branch would have sent the lane
        // into the arm (%p1 off).
        assert_eq!(stores.len(), 2);
        assert!(stores
            .iter()
            .all(|i| i.guard.is_some_and(|(_, negated)| negated)));
        assert!(matches!(&stores[1].kind, InstKind::St { srcs, .. } if srcs[0] == Value::Imm(7)));
    }

    #[test]
    fn uniform_branches_memory_and_big_bodies_stay() {
        // On a parameter: uniform.
        let (_, layout) = converted(&format!(
            "{REGS}ld.param.u32 %r1, [n];\nsetp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n\
             add.s32 %r2, %r1, 1;\nL1:\nret;"
        ));
        assert_eq!(layout.len(), 3);
        // A volatile store or an atomic in the body (a plain store becomes
        // a guarded one: see `stores_run_guarded`).
        for access in [
            "st.volatile.global.u32 [%rd1], %r1",
            "atom.global.add.u32 %r2, [%rd1], 1",
        ] {
            let (_, layout) = converted(&format!(
                "{REGS}mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n\
                 ld.param.u64 %rd1, [out];\n{access};\nL1:\nret;"
            ));
            assert_eq!(layout.len(), 3, "{access}");
        }
        // A body that rewrites the branch's predicate.
        let (_, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n\
             setp.eq.s32 %p1, %r1, 4;\nL1:\nret;"
        ));
        assert_eq!(layout.len(), 3);
        // Too long a body.
        let long = "add.s32 %r2, %r2, 1;\n".repeat(MAX_BODY + 1);
        let (_, layout) = converted(&format!(
            "{REGS}mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 3;\n@%p1 bra L1;\n{long}L1:\nret;"
        ));
        assert_eq!(layout.len(), 3);
    }
}
