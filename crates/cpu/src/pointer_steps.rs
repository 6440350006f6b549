//! Pointers stepped round a loop. For `p = a + i` before a loop and
//! `p += s` in it (a tile loop's `a[row * k + tx + k0]` after NVRTC's
//! strength reduction), PTX keeps one 64-bit register written in two
//! places. Widening `i` may jump inside a warp, and a register written in
//! two places keeps a lane form only without a jump (see `lanes`), so the
//! warp carries a vector of 64-bit addresses round the loop, in its state
//! across barriers, and every access tests them.
//!
//! Rewritten, the steps go to a register of their own, `o` (0 where `p`
//! was set, `o += s` where it stepped), and each use reads `p` made again
//! just before it: `(a + o) + ext(i) * c`. With `a`, `s` and `o` the same
//! in every lane, that is an access `base + ext(index) * size` again: one
//! vector access tested on the 32-bit index (see `indexed`), or one load a
//! block row (see `lower::load_row_indexed`). The rewrite is exact: `a`
//! and `i` are never written once `p` is set, whose first write
//! dominates every read, so `p = a + ext(i) * c + o` holds wherever `p`
//! is read.
//!
//! Only where it pays: `i`'s lanes follow a form (in the warp, or in each
//! block row), so making the address again costs scalars, and both of
//! `p`'s writes run with every live lane (`convergent`), so `o` stays one
//! scalar.

use crate::prepare::Prepared;
use std::collections::HashMap;
use warpfold_ir::*;

thread_local! {
    /// Pointers rewritten by compilations on this thread: for tests.
    pub(crate) static REWRITTEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `p`'s first write: `a + ext(i) * c`, the product in `offset`.
struct Start {
    base: Value,
    offset: Reg,
    index: Reg,
    signed: bool,
    scale: u64,
}

/// One pointer to rewrite: its writes and reads.
struct Stepped {
    reg: Reg,
    start: Start,
    /// Where `p` is set (block, index), and where it steps, by how much
    /// (a loop unrolled by NVRTC steps in its body and its remainder).
    set_at: (BlockId, usize),
    steps_at: Vec<((BlockId, usize), Value)>,
    /// The register the steps go to.
    steps: Reg,
}

/// Whether `p` has a 64-bit register stepped in place (`p = p + s`): only
/// then is `rewrite` worth its analysis.
pub(crate) fn candidates(p: &Prepared) -> bool {
    p.order.iter().any(|b| {
        p.func.blocks[*b].insts.iter().any(|i| match &i.kind {
            InstKind::Int { dst, .. } => stepping(i, *dst).is_some(),
            _ => false,
        })
    })
}

/// `WARPFOLD_POINTER_STEPS=off` leaves stepped pointers as they are.
pub(crate) fn enabled() -> bool {
    std::env::var("WARPFOLD_POINTER_STEPS").map_or(true, |v| v != "off")
}

/// Rewrite the stepped pointers of `p` (see the module comment); `known`
/// says which 32-bit registers have lanes that follow a form, `uniform`
/// which registers are the same in every lane, `convergent` which blocks
/// every live lane runs together (by block id). Returns how many pointers
/// it rewrote.
pub(crate) fn rewrite(
    p: &mut Prepared,
    known: &dyn Fn(Reg) -> bool,
    uniform: &dyn Fn(Reg) -> bool,
    convergent: &[bool],
) -> usize {
    let f = &p.func;
    let n = f.regs.len();
    let Some(&entry) = p.order.first() else {
        return 0;
    };
    let dom = crate::dom::Dominators::new(f.blocks.len(), entry.0 as usize, &|b| {
        crate::lanes::succs(&f.blocks[BlockId(b as u32)])
            .iter()
            .map(|s| s.0 as usize)
            .collect()
    });
    // Every register's writes, in reachable blocks.
    let mut defs: Vec<Vec<(BlockId, usize)>> = vec![Vec::new(); n];
    for &b in &p.order {
        if !dom.reachable(b.0 as usize) {
            continue;
        }
        for (ix, i) in f.blocks[b].insts.iter().enumerate() {
            for d in crate::uniform::defs(&i.kind) {
                defs[d.0 as usize].push((b, ix));
            }
        }
    }
    let before = |(ab, ai): (BlockId, usize), (bb, bi): (BlockId, usize)| {
        if ab == bb {
            ai < bi
        } else {
            dom.dominates(ab.0 as usize, bb.0 as usize)
        }
    };
    // Whether register `r` may be written after `at` (a later instruction
    // of its block, or any block reachable from there): else its value
    // wherever `at` has run is the one it had there.
    let written_after = |r: Reg, (b, ix): (BlockId, usize)| -> bool {
        let ds = &defs[r.0 as usize];
        if ds.iter().any(|&(db, dix)| db == b && dix > ix) {
            return true;
        }
        let mut seen = vec![false; f.blocks.len()];
        let mut stack: Vec<BlockId> = crate::lanes::succs(&f.blocks[b]);
        while let Some(x) = stack.pop() {
            if std::mem::replace(&mut seen[x.0 as usize], true) {
                continue;
            }
            if ds.iter().any(|&(db, _)| db == x) {
                return true;
            }
            stack.extend(crate::lanes::succs(&f.blocks[x]));
        }
        false
    };
    let inst = |(b, ix): (BlockId, usize)| &f.blocks[b].insts[ix];
    let runs_together =
        |(b, _): (BlockId, usize)| convergent.get(b.0 as usize).copied().unwrap_or(false);
    let mut found = Vec::new();
    for r in 0..n {
        let reg = Reg(r as u32);
        if f.regs[reg].ty.bits() != 64 {
            continue;
        }
        // One write that sets `p`, the others step it.
        let (sets, steps_at): (Vec<_>, Vec<_>) = defs[r]
            .iter()
            .partition(|&&d| stepping(inst(d), reg).is_none());
        let [set_at] = sets[..] else { continue };
        if steps_at.is_empty() || inst(set_at).guard.is_some() || !runs_together(set_at) {
            continue;
        }
        // (Any step is exact; uniform ones keep the steps one scalar.)
        let steps_at: Vec<_> = steps_at
            .into_iter()
            .filter_map(|d| Some((d, stepping(inst(d), reg)?)))
            .collect();
        let steps_fine = steps_at.iter().all(|&(d, step)| {
            inst(d).guard.is_none()
                && before(set_at, d)
                && runs_together(d)
                && match step {
                    Value::Imm(_) => true,
                    Value::Reg(s) => uniform(s),
                }
        });
        // The offset's write: the last before `p`'s in its block, with
        // the index not written between them.
        let insts = &f.blocks[set_at.0].insts;
        let writes = |k: usize, r: Reg| crate::uniform::defs(&insts[k].kind).contains(&r);
        let offset_at = |t: Reg| (0..set_at.1).rev().find(|&k| writes(k, t));
        let Some(start) = start(inst(set_at), reg, |t| offset_at(t).map(|k| &insts[k])) else {
            continue;
        };
        let Some(k) = [start.offset].into_iter().find_map(offset_at) else {
            continue;
        };
        if (k + 1..set_at.1).any(|j| writes(j, start.index)) {
            continue;
        }
        let base_ok = match start.base {
            Value::Imm(_) => true,
            Value::Reg(a) => uniform(a) && !written_after(a, set_at),
        };
        if !steps_fine || !base_ok || !known(start.index) || written_after(start.index, set_at) {
            continue;
        }
        // Every read after the first write, of a kind rewritten here.
        let mut fine = true;
        for &bid in &p.order {
            for (ix, i) in f.blocks[bid].insts.iter().enumerate() {
                let at = (bid, ix);
                let steps_here = steps_at.iter().any(|&(d, _)| d == at);
                if steps_here || !crate::uniform::uses(i).contains(&reg) {
                    continue;
                }
                fine &= before(set_at, at) && reads_rewritable(&i.kind, reg);
            }
            let b = &f.blocks[bid];
            if let Some(Terminator::Branch { pred, .. }) = &b.term {
                fine &= *pred != reg;
            }
        }
        if fine {
            found.push((reg, start, set_at, steps_at));
        }
    }
    let count = found.len();
    if count == 0 {
        return 0;
    }
    let mut stepped = Vec::new();
    for (reg, start, set_at, steps_at) in found {
        let name = format!("{}_steps", p.func.regs[reg].name);
        let steps = p.func.regs.push(RegInfo { name, ty: Ty::U64 });
        stepped.push(Stepped {
            reg,
            start,
            set_at,
            steps_at,
            steps,
        });
    }
    apply(p, &stepped);
    REWRITTEN.with(|c| c.set(c.get() + count));
    count
}

/// `p += s` (either operand order): `s`.
fn stepping(i: &Inst, p: Reg) -> Option<Value> {
    match &i.kind {
        InstKind::Int {
            op: IntOp::Add,
            ty,
            dst,
            args,
        } if *dst == p && ty.bits() == 64 => match args[..] {
            [Value::Reg(x), s] if x == p && s != Value::Reg(p) => Some(s),
            [s, Value::Reg(x)] if x == p && s != Value::Reg(p) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// `p = a + t` with `t = mul.wide i, c` (either operand order), `def`
/// giving the write of `t` that `p`'s reads.
fn start<'a>(i: &Inst, p: Reg, def: impl Fn(Reg) -> Option<&'a Inst>) -> Option<Start> {
    let InstKind::Int {
        op: IntOp::Add,
        ty,
        dst,
        args,
    } = &i.kind
    else {
        return None;
    };
    if *dst != p || ty.bits() != 64 {
        return None;
    }
    let wide = |v: Value| -> Option<(Reg, Reg, bool, u64)> {
        let Value::Reg(t) = v else { return None };
        let d = def(t)?;
        match &d.kind {
            InstKind::Int {
                op: IntOp::MulWide,
                ty,
                args,
                dst,
            } if d.guard.is_none() && *dst == t && matches!(ty, Ty::S32 | Ty::U32) => {
                match args[..] {
                    [Value::Reg(x), Value::Imm(c)] | [Value::Imm(c), Value::Reg(x)] => {
                        Some((t, x, ty.is_signed(), c & 0xffff_ffff))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    };
    let [x, y] = args[..] else { return None };
    let (base, (offset, index, signed, scale)) = match (wide(x), wide(y)) {
        (_, Some(w)) => (x, w),
        (Some(w), None) => (y, w),
        _ => return None,
    };
    Some(Start {
        base,
        offset,
        index,
        signed,
        scale,
    })
}

/// Whether an instruction reading `p` reads it where `apply` can put
/// another register instead: an address, or an integer or move operand.
fn reads_rewritable(k: &InstKind, p: Reg) -> bool {
    match k {
        InstKind::Ld { addr, .. } => addr.base == AddrBase::Reg(p),
        InstKind::St { addr, srcs, .. } => {
            addr.base == AddrBase::Reg(p) && !srcs.contains(&Value::Reg(p))
        }
        InstKind::Int { .. } | InstKind::Mov { .. } => true,
        _ => false,
    }
}

/// `k` reading `to` where it read `from`.
fn replace_reads(k: &mut InstKind, from: Reg, to: Reg) {
    let swap = |v: &mut Value| {
        if *v == Value::Reg(from) {
            *v = Value::Reg(to);
        }
    };
    match k {
        InstKind::Ld { addr, .. } | InstKind::St { addr, .. } => {
            if addr.base == AddrBase::Reg(from) {
                addr.base = AddrBase::Reg(to);
            }
        }
        InstKind::Int { args, .. } => args.iter_mut().for_each(swap),
        InstKind::Mov { src, .. } => swap(src),
        _ => {}
    }
}

fn apply(p: &mut Prepared, stepped: &[Stepped]) {
    let by_reg: HashMap<Reg, &Stepped> = stepped.iter().map(|s| (s.reg, s)).collect();
    let blocks: Vec<BlockId> = p.order.clone();
    for bid in blocks {
        let old = std::mem::take(&mut p.func.blocks[bid].insts);
        let mut new = Vec::with_capacity(old.len());
        for (ix, mut i) in old.into_iter().enumerate() {
            let at = (bid, ix);
            let loc = i.loc;
            let plain = |kind| Inst {
                kind,
                guard: None,
                loc,
            };
            let step = stepped
                .iter()
                .find_map(|s| Some((s.steps, s.steps_at.iter().find(|x| x.0 == at)?.1)));
            if let Some((o, step)) = step {
                new.push(plain(InstKind::Int {
                    op: IntOp::Add,
                    ty: Ty::U64,
                    dst: o,
                    args: vec![Value::Reg(o), step],
                }));
                continue;
            }
            let reads: Vec<&Stepped> = crate::uniform::uses(&i)
                .iter()
                .filter_map(|r| by_reg.get(r).copied())
                .collect();
            let mut seen = Vec::new();
            for s in reads {
                if seen.contains(&s.reg) {
                    continue;
                }
                seen.push(s.reg);
                // (a + o) + ext(i) * c, in registers of its own.
                let mut fresh = |name: &str| {
                    let name = format!("{}_{name}", p.func.regs[s.reg].name);
                    p.func.regs.push(RegInfo { name, ty: Ty::U64 })
                };
                let (shifted, offset, at_use) = (fresh("base"), fresh("offset"), fresh("at"));
                new.push(plain(InstKind::Int {
                    op: IntOp::Add,
                    ty: Ty::U64,
                    dst: shifted,
                    args: vec![s.start.base, Value::Reg(s.steps)],
                }));
                new.push(plain(InstKind::Int {
                    op: IntOp::MulWide,
                    ty: if s.start.signed { Ty::S32 } else { Ty::U32 },
                    dst: offset,
                    args: vec![Value::Reg(s.start.index), Value::Imm(s.start.scale)],
                }));
                new.push(plain(InstKind::Int {
                    op: IntOp::Add,
                    ty: Ty::U64,
                    dst: at_use,
                    args: vec![Value::Reg(shifted), Value::Reg(offset)],
                }));
                replace_reads(&mut i.kind, s.reg, at_use);
            }
            let sets: Vec<Reg> = stepped
                .iter()
                .filter(|s| s.set_at == at)
                .map(|s| s.steps)
                .collect();
            new.push(i);
            for o in sets {
                new.push(plain(InstKind::Mov {
                    ty: Ty::U64,
                    dst: o,
                    src: Value::Imm(0),
                }));
            }
        }
        p.func.blocks[bid].insts = new;
    }
}
