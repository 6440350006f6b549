//! Facts about a kernel's registers the emitter needs: what instructions
//! define and read, which operations give the same value in every lane,
//! liveness, which registers can be computed again instead of saved, and
//! which float registers may hold non-canonical NaNs. (How values vary
//! across lanes is in `lanes`.)

use crate::prepare::Prepared;
use warpfold_ir::*;

pub(crate) fn defs(k: &InstKind) -> Vec<Reg> {
    let mut out = Vec::new();
    match k {
        InstKind::Mov { dst, .. }
        | InstKind::AddrOf { dst, .. }
        | InstKind::Int { dst, .. }
        | InstKind::Float { dst, .. }
        | InstKind::Set { dst, .. }
        | InstKind::Selp { dst, .. }
        | InstKind::Slct { dst, .. }
        | InstKind::PredOp { dst, .. }
        | InstKind::Testp { dst, .. }
        | InstKind::IsSpace { dst, .. }
        | InstKind::Cvt { dst, .. }
        | InstKind::Cvta { dst, .. }
        | InstKind::Pack { dst, .. }
        | InstKind::Activemask { dst }
        | InstKind::ReadSpecial { dst, .. }
        | InstKind::Vote { dst, .. }
        | InstKind::Redux { dst, .. } => out.push(*dst),
        InstKind::Carry { dst, carry_out, .. } => {
            out.push(*dst);
            out.extend(carry_out.iter());
        }
        InstKind::Setp { dst, dst2, .. } => {
            out.push(*dst);
            out.extend(dst2.iter());
        }
        InstKind::Unpack { dsts, .. } | InstKind::Ld { dsts, .. } => {
            out.extend(dsts.iter().flatten())
        }
        InstKind::Atom { dst, .. } => out.extend(dst.iter()),
        InstKind::Bar { dst, .. } => out.extend(dst.iter()),
        InstKind::Shfl { dst, pred_dst, .. } | InstKind::Match { dst, pred_dst, .. } => {
            out.push(*dst);
            out.extend(pred_dst.iter());
        }
        InstKind::Call { rets, .. }
        | InstKind::CallIndirect { rets, .. }
        | InstKind::Builtin { rets, .. } => {
            out.extend(rets.iter().filter_map(|r| {
                if let CallArg::Reg(r) = r {
                    Some(*r)
                } else {
                    None
                }
            }));
        }
        InstKind::St { .. }
        | InstKind::Fence
        | InstKind::WarpSync { .. }
        | InstKind::Trap
        | InstKind::Nop => {}
    }
    out
}

/// The operands of an instruction that can be uniform, or `None` when its
/// result may differ between lanes.
pub(crate) fn uniform_operands(m: &Module, k: &InstKind) -> Option<Vec<Value>> {
    let addr_regs = |a: &Address| -> Option<Vec<Value>> {
        match a.base {
            AddrBase::Reg(r) => Some(vec![Value::Reg(r)]),
            AddrBase::Symbol(Symbol::Local(_)) => None,
            AddrBase::Symbol(_) | AddrBase::None => Some(vec![]),
        }
    };
    Some(match k {
        InstKind::Mov { src, .. } => vec![*src],
        InstKind::Int { args, .. } | InstKind::Float { args, .. } => args.clone(),
        InstKind::Setp { a, b, combine, .. } | InstKind::Set { a, b, combine, .. } => {
            let mut v = vec![*a, *b];
            v.extend(combine.iter().map(|c| c.1));
            v
        }
        InstKind::Selp { a, b, c, .. } | InstKind::Slct { a, b, c, .. } => vec![*a, *b, *c],
        InstKind::PredOp { a, b, .. } => vec![*a, *b],
        InstKind::Testp { a, .. } | InstKind::Cvt { src: a, .. } => vec![*a],
        InstKind::Cvta { space, src, .. } if *space != Space::Local => vec![*src],
        InstKind::AddrOf { sym, .. } => match sym {
            Symbol::Local(_) | Symbol::Function(_) => return None,
            Symbol::Global(g) if m.globals.get(*g).is_none() => return None,
            _ => vec![],
        },
        InstKind::Ld {
            space: Space::Param | Space::Const,
            addr,
            ..
        } => addr_regs(addr)?,
        InstKind::ReadSpecial {
            sreg:
                Special::Ctaid(_)
                | Special::Ntid(_)
                | Special::Nctaid(_)
                | Special::WarpId
                | Special::NWarpId
                | Special::GridId
                | Special::DynamicSmemSize
                | Special::TotalSmemSize
                | Special::EnvReg(_),
            ..
        } => vec![],
        _ => return None,
    })
}

/// Whether an instruction's definitions may leave some running lanes'
/// old values in place (guarded, or written per lane by helpers).
pub(crate) fn partial_def(i: &Inst) -> bool {
    i.guard.is_some()
        || matches!(
            i.kind,
            InstKind::Atom { .. }
                | InstKind::Call { .. }
                | InstKind::CallIndirect { .. }
                | InstKind::Builtin { .. }
        )
}

/// The destination and the two operands of a 64-bit `add`: the address
/// arithmetic that `pointer_steps` and `own_slots` follow.
pub(crate) fn add64(k: &InstKind) -> Option<(Reg, Value, Value)> {
    match k {
        InstKind::Int {
            op: IntOp::Add,
            ty,
            dst,
            args,
        } if ty.bits() == 64 => match args[..] {
            [a, b] => Some((*dst, a, b)),
            _ => None,
        },
        _ => None,
    }
}

/// Registers an instruction reads (including guards and call arguments).
pub(crate) fn uses(i: &Inst) -> Vec<Reg> {
    let mut out: Vec<Reg> = Vec::new();
    let mut v = |x: &Value| {
        if let Value::Reg(r) = x {
            out.push(*r);
        }
    };
    let mut vals: Vec<Value> = Vec::new();
    let addr = |a: &Address, vals: &mut Vec<Value>| {
        if let AddrBase::Reg(r) = a.base {
            vals.push(Value::Reg(r));
        }
    };
    match &i.kind {
        InstKind::Mov { src, .. } => vals.push(*src),
        InstKind::AddrOf { .. } | InstKind::Activemask { .. } | InstKind::ReadSpecial { .. } => {}
        InstKind::Int { args, .. } | InstKind::Float { args, .. } => vals.extend(args),
        InstKind::Carry { a, b, carry_in, .. } => {
            vals.extend([*a, *b]);
            vals.extend(carry_in.iter().map(|r| Value::Reg(*r)));
        }
        InstKind::Setp { a, b, combine, .. } | InstKind::Set { a, b, combine, .. } => {
            vals.extend([*a, *b]);
            vals.extend(combine.iter().map(|c| c.1));
        }
        InstKind::Selp { a, b, c, .. } | InstKind::Slct { a, b, c, .. } => {
            vals.extend([*a, *b, *c])
        }
        InstKind::PredOp { a, b, .. } => vals.extend([*a, *b]),
        InstKind::Testp { a, .. }
        | InstKind::IsSpace { src: a, .. }
        | InstKind::Cvt { src: a, .. }
        | InstKind::Cvta { src: a, .. } => vals.push(*a),
        InstKind::Pack { parts, .. } => vals.extend(parts),
        InstKind::Unpack { src, .. } => vals.push(*src),
        InstKind::Ld { addr: a, .. } => addr(a, &mut vals),
        InstKind::St { srcs, addr: a, .. } => {
            vals.extend(srcs);
            addr(a, &mut vals);
        }
        InstKind::Atom {
            addr: a, a: x, b, ..
        } => {
            addr(a, &mut vals);
            vals.push(*x);
            vals.extend(b.iter());
        }
        InstKind::Bar {
            id, count, pred, ..
        } => {
            vals.push(*id);
            vals.extend(count.iter());
            vals.extend(pred.iter().map(|p| p.0));
        }
        InstKind::Shfl { a, b, c, mask, .. } => vals.extend([*a, *b, *c, *mask]),
        InstKind::Vote { a, mask, .. }
        | InstKind::Match { a, mask, .. }
        | InstKind::Redux { a, mask, .. } => vals.extend([*a, *mask]),
        InstKind::WarpSync { mask } => vals.push(*mask),
        InstKind::Call { args, rets, .. } | InstKind::Builtin { args, rets, .. } => {
            for c in args.iter().chain(rets) {
                if let CallArg::Reg(r) = c {
                    vals.push(Value::Reg(*r));
                }
            }
        }
        InstKind::CallIndirect { target, args, rets } => {
            vals.push(*target);
            for c in args.iter().chain(rets) {
                if let CallArg::Reg(r) = c {
                    vals.push(Value::Reg(*r));
                }
            }
        }
        InstKind::Fence | InstKind::Trap | InstKind::Nop => {}
    }
    vals.iter().for_each(&mut v);
    if let Some((g, _)) = i.guard {
        out.push(g);
    }
    out
}

/// Which registers are live where, as the emitter needs it.
pub struct Liveness {
    /// Live on entry to some block. A register that never is can be
    /// written without keeping other lanes' old values (they are dead):
    /// each group of lanes that runs a block defines it before reading it.
    pub anywhere: Vec<bool>,
    /// Live on entry to the entry block: some lane may read it before
    /// writing it. Only these need the zero a fresh warp starts with.
    pub at_entry: Vec<bool>,
    /// Per block (by index): the registers live on entry.
    pub live_in: Vec<Vec<bool>>,
}

pub fn liveness(p: &Prepared) -> Liveness {
    let live_in = live_in_sets(p);
    let n = p.func.regs.len();
    Liveness {
        anywhere: (0..n).map(|r| live_in.iter().any(|b| b[r])).collect(),
        at_entry: match p.order.first() {
            Some(e) => live_in[e.0 as usize].clone(),
            None => vec![false; n],
        },
        live_in,
    }
}

/// Per register: the one block it is live on entry to, when there is
/// exactly one and no lane can be held inside a block that mentions it.
///
/// A group of lanes runs a block while the warp's other lanes wait at the
/// start of other blocks (or have exited). Where such a register is
/// written in its block, a waiting lane's value is dead: from any other
/// block start every path writes the register before it reads it (else
/// it would be live there too). So the write needs no blend with the old
/// value, as for a register live nowhere. A lane can also wait inside a
/// block, at a barrier or a warp collective, with a register it wrote
/// earlier in that block still to be read: hence every block that reads
/// or writes the register holds only instructions no lane waits at
/// (`plain`, per block: see `plain_blocks`).
/// Mandelbrot's escape loop is one block that carries x, y and their
/// squares round itself: they are live into it alone.
pub fn live_in_one_block(
    p: &Prepared,
    liveness: &Liveness,
    plain: &[bool],
) -> Vec<Option<BlockId>> {
    let f = &p.func;
    let n = f.regs.len();
    let mut only: Vec<Option<BlockId>> = vec![None; n];
    let mut count = vec![0u32; n];
    for (bid, live) in f.blocks.keys().zip(&liveness.live_in) {
        for r in (0..n).filter(|&r| live[r]) {
            count[r] += 1;
            only[r] = Some(bid);
        }
    }
    let mut held = vec![false; n];
    for (b, _) in f.blocks.values().zip(plain).filter(|(_, plain)| !**plain) {
        for i in &b.insts {
            for r in uses(i).into_iter().chain(defs(&i.kind)) {
                held[r.0 as usize] = true;
            }
        }
        if let Some(Terminator::Branch { pred, .. }) = &b.term {
            held[pred.0 as usize] = true;
        }
    }
    (0..n)
        .map(|r| only[r].filter(|_| count[r] == 1 && !held[r]))
        .collect()
}

/// Per block (by index): whether no lane can be held inside it while
/// other lanes of its warp run on (see `no_lane_waits`).
pub(crate) fn plain_blocks(f: &Function) -> Vec<bool> {
    f.blocks
        .values()
        .map(|b| b.insts.iter().all(|i| no_lane_waits(&i.kind)))
        .collect()
}

/// Whether no lane can be held at `k` while other lanes of its warp run
/// on: not a barrier, warp collective, call or host call.
fn no_lane_waits(k: &InstKind) -> bool {
    crate::lanes::pure(k)
        || matches!(
            k,
            InstKind::Unpack { .. }
                | InstKind::Ld { .. }
                | InstKind::St { .. }
                | InstKind::ReadSpecial { .. }
        )
}

/// Per block (by index): the registers live on entry.
fn live_in_sets(p: &Prepared) -> Vec<Vec<bool>> {
    let f = &p.func;
    let n = f.regs.len();
    let nb = f.blocks.len();
    // Per block: upward-exposed uses and kills (unguarded definitions).
    let mut ue = vec![vec![false; n]; nb];
    let mut kill = vec![vec![false; n]; nb];
    for (bid, b) in f.blocks.iter() {
        let (u, k) = (&mut ue[bid.0 as usize], &mut kill[bid.0 as usize]);
        for i in &b.insts {
            for r in uses(i) {
                if !k[r.0 as usize] {
                    u[r.0 as usize] = true;
                }
            }
            if !partial_def(i) {
                for d in defs(&i.kind) {
                    k[d.0 as usize] = true;
                }
            }
        }
        match &b.term {
            Some(Terminator::Branch { pred, .. }) if !k[pred.0 as usize] => {
                u[pred.0 as usize] = true
            }
            _ => {}
        }
    }
    let succs = |b: &Block| -> Vec<usize> {
        match &b.term {
            Some(Terminator::Jump(t)) => vec![t.0 as usize],
            Some(Terminator::Branch { then, els, .. }) => vec![then.0 as usize, els.0 as usize],
            _ => vec![],
        }
    };
    let mut live_in = ue.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for (bid, b) in f.blocks.iter() {
            let bi = bid.0 as usize;
            for s in succs(b) {
                for r in 0..n {
                    if live_in[s][r] && !kill[bi][r] && !live_in[bi][r] {
                        live_in[bi][r] = true;
                        changed = true;
                    }
                }
            }
        }
    }
    live_in
}

/// Registers that need not survive a return to the CTA driver because they
/// can be computed again: a single unguarded definition in the entry block
/// by a pure instruction (no stores, atomics or warp operations; loads only
/// from the read-only param/const spaces) whose register operands are
/// themselves of this kind. `%tid`-derived indices and addresses are the
/// usual ones. Later blocks add moves and symbol addresses of this kind
/// (a constant set after an early return: SGEMM's `0.0` for tiles past
/// the edge) where the definition comes before every read of the register
/// (its block dominates theirs): wherever the register is live, each lane
/// has run the definition and holds its value. Nothing else there: work
/// that some lanes skipped may fault for them (a constant load past its
/// table). The entry block's definitions must come before every read too
/// (a read before one in the entry block sees the zero a fresh warp
/// starts with). Returns the flags and the defining instructions in
/// order.
pub fn rematerialisable(m: &Module, p: &Prepared) -> (Vec<bool>, Vec<Inst>) {
    let f = &p.func;
    let mut remat = vec![false; f.regs.len()];
    let mut insts = Vec::new();
    let Some(&entry) = p.order.first() else {
        return (remat, insts);
    };
    let targets_entry = f.blocks.values().any(|b| match &b.term {
        Some(Terminator::Jump(t)) => *t == entry,
        Some(Terminator::Branch { then, els, .. }) => *then == entry || *els == entry,
        _ => false,
    });
    if targets_entry {
        return (remat, insts);
    }
    let ndefs = def_counts(f);
    let dom = crate::dom::Dominators::new(f.blocks.len(), entry.0 as usize, &|b| {
        crate::lanes::succs(&f.blocks[BlockId(b as u32)])
            .iter()
            .map(|s| s.0 as usize)
            .collect()
    });
    let before_reads = defined_before_reads(f, &dom);
    let ordered = p.order.iter().enumerate();
    for (id, i) in ordered.flat_map(|(id, b)| f.blocks[*b].insts.iter().map(move |i| (id, i))) {
        if i.guard.is_some() {
            continue;
        }
        if id != 0 && !matches!(i.kind, InstKind::Mov { .. } | InstKind::AddrOf { .. }) {
            continue;
        }
        let ops = match &i.kind {
            InstKind::ReadSpecial { sreg, .. } => match sreg {
                Special::Clock
                | Special::Clock64
                | Special::GlobalTimer
                | Special::SmId
                | Special::NSmId => continue,
                _ => vec![],
            },
            k => match uniform_operands(m, k) {
                Some(ops) => ops,
                None => continue,
            },
        };
        if !ops.iter().all(|v| match v {
            Value::Imm(_) => true,
            Value::Reg(r) => remat[r.0 as usize],
        }) {
            continue;
        }
        let ds = defs(&i.kind);
        if ds.is_empty() || ds.iter().any(|d| ndefs[d.0 as usize] != 1) {
            continue;
        }
        if !ds.iter().all(|d| before_reads[d.0 as usize]) {
            continue;
        }
        for d in ds {
            remat[d.0 as usize] = true;
        }
        insts.push(i.clone());
    }
    (remat, insts)
}

/// Registers with exactly one definition, a full one (no `partial_def`),
/// that comes before every read: its block dominates each block that reads
/// the register, and in its own block every read comes after it. `dom` is
/// over block indices; blocks it does not reach neither define nor read.
pub(crate) fn defined_before_reads(f: &Function, dom: &crate::dom::Dominators) -> Vec<bool> {
    let n = f.regs.len();
    let mut def_at: Vec<Vec<(BlockId, usize)>> = vec![Vec::new(); n];
    let mut unfit = vec![false; n];
    let reached = || f.blocks.iter().filter(|(bid, _)| dom.reachable(bid.0 as usize));
    for (bid, b) in reached() {
        for (ix, i) in b.insts.iter().enumerate() {
            for d in defs(&i.kind) {
                def_at[d.0 as usize].push((bid, ix));
                unfit[d.0 as usize] |= partial_def(i);
            }
        }
    }
    let mut single: Vec<bool> = (0..n).map(|r| def_at[r].len() == 1 && !unfit[r]).collect();
    for (bid, b) in reached() {
        let mut check = |r: Reg, ix: usize| {
            let r = r.0 as usize;
            if let [(db, dix)] = def_at[r][..] {
                single[r] &= if db == bid {
                    dix < ix
                } else {
                    dom.dominates(db.0 as usize, bid.0 as usize)
                };
            }
        };
        for (ix, i) in b.insts.iter().enumerate() {
            for r in uses(i) {
                check(r, ix);
            }
        }
        if let Some(Terminator::Branch { pred, .. }) = &b.term {
            check(*pred, b.insts.len());
        }
    }
    single
}

/// Registers whose NaNs may be left as the CPU made them and made
/// canonical only where bits are observed: every definition is float
/// arithmetic that gives the canonical NaN on the GPU, or a move or shuffle
/// of such a register (they carry a value without looking at it, so
/// `float -> mov.b32 -> shfl -> mov.b32 -> add` canonicalises nowhere). A
/// register also written by a load, atomic, abs/neg and so on must keep
/// those bits, so its arithmetic definitions canonicalise at once instead,
/// unless nothing ever observes its bits: a register read only by such
/// arithmetic (and IEEE division) and by moves, selects and shuffles into
/// registers like it may hold any NaN, whatever defines it (LU's
/// right-hand side, loaded, then `y = i > k ? y - l * yk : y` and
/// `y / a[k]`: no select canonicalises).
/// 32-bit integer registers count as f32 here, 64-bit ones as f64.
pub(crate) fn lazily_canonical_floats(p: &Prepared) -> Vec<Option<Ty>> {
    let f = &p.func;
    let as_float = |t: Ty| match t {
        Ty::F32 | Ty::F64 => Some(t),
        Ty::B32 | Ty::U32 | Ty::S32 => Some(Ty::F32),
        Ty::B64 | Ty::U64 | Ty::S64 => Some(Ty::F64),
        _ => None,
    };
    let mut out: Vec<Option<Ty>> = f.regs.values().map(|r| as_float(r.ty)).collect();
    // Registers something other than float arithmetic of their own type
    // reads: the arithmetic gives the canonical NaN whatever NaN it reads,
    // so a register read by arithmetic alone never shows its NaN's bits.
    let mut shown = vec![false; f.regs.len()];
    // Shown other than through a move, select or shuffle (`carries`).
    let mut exposed = vec![false; f.regs.len()];
    for b in f.blocks.values() {
        for i in &b.insts {
            let arith = match &i.kind {
                InstKind::Float {
                    op:
                        FloatOp::Add
                        | FloatOp::Sub
                        | FloatOp::Mul
                        | FloatOp::Fma
                        | FloatOp::Div(FloatKind::Rounded(Round::Nearest)),
                    ty,
                    ..
                } => Some(*ty),
                _ => None,
            };
            // A register read in more places than the carried ones (a
            // shuffle's value that is also its lane index) is exposed.
            let mut carried: Vec<Reg> = carries(&i.kind).into_iter().map(|(s, _)| s).collect();
            for r in uses(i) {
                if arith.is_none() || out[r.0 as usize] != arith {
                    shown[r.0 as usize] = true;
                    match carried.iter().position(|s| *s == r) {
                        Some(k) => {
                            carried.swap_remove(k);
                        }
                        None => exposed[r.0 as usize] = true,
                    }
                }
            }
        }
    }
    // Exposed through what carries it to an exposed register.
    loop {
        let mut changed = false;
        for b in f.blocks.values() {
            for i in &b.insts {
                for (s, d) in carries(&i.kind) {
                    if exposed[d.0 as usize] && !exposed[s.0 as usize] {
                        exposed[s.0 as usize] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Optimistic: drop registers with a disqualifying definition until
    // nothing changes (moves and shuffles depend on their sources).
    loop {
        let mut changed = false;
        for b in f.blocks.values() {
            for i in &b.insts {
                // A constant is as good as a lazy register unless it is a
                // NaN other than the canonical one (which a lazy register
                // would turn into the canonical one when observed).
                let carried = |v: &Value, want: Option<Ty>, out: &[Option<Ty>]| match v {
                    Value::Reg(r) => want.is_some() && out[r.0 as usize] == want,
                    Value::Imm(x) => want.is_some_and(|t| keeps_its_bits(*x, t)),
                };
                let fine = |d: Reg, out: &[Option<Ty>]| -> bool {
                    let want = out[d.0 as usize];
                    match &i.kind {
                        // A negation read only by arithmetic (an `fma` for
                        // `x - a * b`) may flip a NaN nobody sees.
                        InstKind::Float {
                            op: FloatOp::Neg,
                            ty,
                            ..
                        } => !shown[d.0 as usize] && want == Some(*ty),
                        InstKind::Float { op, ty, .. } => {
                            !matches!(op, FloatOp::Abs | FloatOp::Neg | FloatOp::Copysign)
                                && want == Some(*ty)
                        }
                        InstKind::Mov { ty, src, .. } => {
                            want.is_some_and(|t| t.bits() == ty.bits()) && carried(src, want, out)
                        }
                        // A select picks one of two values without looking
                        // at them (LU's `below ? a - l * u : a`).
                        InstKind::Selp { ty, a, b, .. } => {
                            want.is_some_and(|t| t.bits() == ty.bits())
                                && carried(a, want, out)
                                && carried(b, want, out)
                        }
                        InstKind::Shfl { dst, a, .. } => {
                            d == *dst && want == Some(Ty::F32) && carried(a, want, out)
                        }
                        _ => false,
                    }
                };
                for d in defs(&i.kind) {
                    if out[d.0 as usize].is_some() && exposed[d.0 as usize] && !fine(d, &out) {
                        out[d.0 as usize] = None;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return out;
        }
    }
}

/// How many instructions of `f` define each register.
pub(crate) fn def_counts(f: &Function) -> Vec<u32> {
    let mut n = vec![0u32; f.regs.len()];
    for i in f.blocks.values().flat_map(|b| &b.insts) {
        for d in defs(&i.kind) {
            n[d.0 as usize] += 1;
        }
    }
    n
}

/// (source, destination) of each register value `k` passes on without
/// looking at it (moves, selects' two values, a shuffle's value).
fn carries(k: &InstKind) -> Vec<(Reg, Reg)> {
    let reg = |v: &Value| match v {
        Value::Reg(r) => Some(*r),
        Value::Imm(_) => None,
    };
    match k {
        InstKind::Mov { dst, src, .. } => reg(src).map(|s| (s, *dst)).into_iter().collect(),
        InstKind::Selp { dst, a, b, .. } => [a, b]
            .into_iter()
            .filter_map(|v| reg(v).map(|s| (s, *dst)))
            .collect(),
        InstKind::Shfl { dst, a, .. } => reg(a).map(|s| (s, *dst)).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Whether constant `x` reads the same as a lazily canonical register of
/// type `t` holding it: anything but a NaN other than the canonical one.
pub(crate) fn keeps_its_bits(x: u64, t: Ty) -> bool {
    if t == Ty::F64 {
        !f64::from_bits(x).is_nan() || x == 0x7fff_ffff_ffff_ffff
    } else {
        let x = x as u32;
        !f32::from_bits(x).is_nan() || x == 0x7fff_ffff
    }
}

/// An operand's value when known: an immediate, or a register `constants`
/// found.
pub(crate) fn known_constant(
    consts: &std::collections::HashMap<Reg, u64>,
    v: &Value,
) -> Option<u64> {
    match v {
        Value::Imm(x) => Some(*x),
        Value::Reg(r) => consts.get(r).copied(),
    }
}

/// Registers whose only definition is an unguarded move of a constant
/// (compilers often keep shuffle operands in registers).
pub(crate) fn constants(f: &Function) -> std::collections::HashMap<Reg, u64> {
    let mut seen: std::collections::HashMap<Reg, Option<u64>> = Default::default();
    for b in f.blocks.values() {
        for i in &b.insts {
            let value = match i.kind {
                InstKind::Mov {
                    src: Value::Imm(v),
                    ty,
                    ..
                } if i.guard.is_none() && ty.bits() <= 64 => Some(v),
                _ => None,
            };
            for r in defs(&i.kind) {
                seen.entry(r).and_modify(|d| *d = None).or_insert(value);
            }
        }
    }
    seen.into_iter()
        .filter_map(|(r, v)| Some((r, v?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rematerialisable;

    /// The kernel's registers (by PTX name) that `rematerialisable` keeps.
    fn remat_names(name: &str) -> Vec<String> {
        let src = include_str!("../../runtime/tests/kernels/remat.ptx");
        let (m, _, p) = crate::prepare::prepared_in(src, name);
        let (remat, _) = rematerialisable(&m, &p);
        let mut names: Vec<String> = p
            .func
            .regs
            .iter()
            .filter(|(r, _)| remat[r.0 as usize])
            .map(|(_, info)| info.name.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn moves_after_an_early_return_are_computed_again() {
        let names = remat_names("after_return");
        for r in ["%f1", "%r3", "%r2"] {
            assert!(names.iter().any(|n| n == r), "{r} in {names:?}");
        }
    }

    #[test]
    fn definitions_some_read_skips_or_that_may_fault_are_kept() {
        let names = remat_names("not_before_reads");
        for r in ["%f1", "%r4", "%r5", "%r7"] {
            assert!(!names.iter().any(|n| n == r), "{r} in {names:?}");
        }
        assert!(names.iter().any(|n| n == "%r2"), "{names:?}");
    }
}
