//! Shared arrays that each thread writes only at its own slot: every
//! store goes to `sym + %tid.x * size` (one-dimensional blocks, so no two
//! threads share a slot). A thread's own slot then holds what its own last
//! store there wrote, whatever other threads do and wherever the barriers
//! are, so a data-flow pass inside one thread knows which stores a load of
//! it may read. Block scans and tree reductions keep their partial sums
//! like this (`s[t] += s[t - d]`).
//!
//! What it decides: where a float stored into such an array may keep the
//! NaN the CPU made instead of being made canonical on its way to memory
//! (see `uniform::lazily_canonical_floats`). That is sound when every load
//! of the array either feeds only arithmetic and comparisons, which do not
//! look at a NaN's payload, or reads the thread's own slot after stores of
//! lazily canonical values only, and makes what it read canonical itself.
//! A Hillis-Steele scan stores its running sum at every step and reads it
//! back as bits once at the end: eight canonicalisations per thread
//! become one (scan 3.3 -> 2.4 ms).

use crate::dom::Dominators;
use crate::lanes::Shape;
use crate::prepare::Prepared;
use crate::uniform::{defs, keeps_its_bits, uses};
use std::collections::{HashMap, HashSet};
use warpfold_ir::*;

/// Where an instruction is: its block and its index in the block.
pub(crate) type At = (BlockId, usize);

#[derive(Default)]
pub(crate) struct OwnSlots {
    /// Stores whose (lazily canonical float) value goes to memory as is.
    pub raw_stores: HashSet<At>,
    /// Own-slot loads that make the value they read canonical, as a float
    /// of this type.
    pub canon_loads: HashMap<At, Ty>,
}

/// What may have been stored last in a thread's own slot (bits of a set).
const NOTHING: u8 = 1;
/// A lazily canonical float (or a constant that is no NaN but the
/// canonical one): canonical once read back through `canon_loads`.
const LAZY: u8 = 2;
/// Bits that must be kept (a loaded value, an integer...).
const EXACT: u8 = 4;

/// What a thread's `%tid.x` is taken to be.
#[derive(Clone, Copy)]
enum Assume {
    Is(u32),
    IsNot(u32),
}

pub(crate) fn own_slots(p: &Prepared, shape: Shape, lazy: &[Option<Ty>]) -> OwnSlots {
    let mut out = OwnSlots::default();
    if shape[1] * shape[2] != 1 {
        return out;
    }
    let f = &p.func;
    let nregs = f.regs.len();
    let nblocks = f.blocks.len();
    let Some(&entry) = p.order.first() else {
        return out;
    };
    let succs = |b: usize| -> Vec<usize> {
        match &f.blocks[BlockId(b as u32)].term {
            Some(Terminator::Jump(t)) => vec![t.0 as usize],
            Some(Terminator::Branch { then, els, .. }) => vec![then.0 as usize, els.0 as usize],
            _ => Vec::new(),
        }
    };
    let dom = Dominators::new(nblocks, entry.0 as usize, &succs);
    let live = |b: BlockId| dom.reachable(b.0 as usize);
    let insts = || {
        f.blocks
            .iter()
            .filter(move |(b, _)| live(*b))
            .flat_map(|(b, blk)| blk.insts.iter().enumerate().map(move |(k, i)| ((b, k), i)))
    };
    let inst = |at: At| &f.blocks[at.0].insts[at.1];
    // Each register's definitions, and where it is read.
    let mut def_at: Vec<Vec<At>> = vec![Vec::new(); nregs];
    let mut used_at: Vec<Vec<At>> = vec![Vec::new(); nregs];
    for (at, i) in insts() {
        // Calls may store anywhere through pointers they are passed.
        if matches!(
            i.kind,
            InstKind::Call { .. } | InstKind::CallIndirect { .. } | InstKind::Builtin { .. }
        ) {
            return out;
        }
        for d in defs(&i.kind) {
            def_at[d.0 as usize].push(at);
        }
        for r in uses(i) {
            used_at[r.0 as usize].push(at);
        }
    }
    // The one unguarded definition of `r`, when it has one.
    let only_def = |r: Reg| match def_at[r.0 as usize][..] {
        [at] if inst(at).guard.is_none() => Some((at, inst(at))),
        _ => None,
    };
    let dominates = |a: At, b: At| {
        if a.0 == b.0 {
            a.1 < b.1
        } else {
            dom.dominates(a.0 .0 as usize, b.0 .0 as usize)
        }
    };
    // Registers holding the address of a shared variable (its `addr.shared`
    // and plain copies of that), with the variable.
    let mut base_of: HashMap<Reg, GlobalId> = HashMap::new();
    let mut bad: HashSet<GlobalId> = HashSet::new();
    for (_, i) in insts() {
        if let InstKind::AddrOf {
            dst,
            sym: Symbol::Global(g),
            space,
        } = i.kind
        {
            if space == Space::Shared && only_def(dst).is_some() {
                base_of.insert(dst, g);
            } else {
                bad.insert(g);
            }
        }
    }
    loop {
        let mut grew = false;
        for (at, i) in insts() {
            if let InstKind::Mov {
                dst,
                src: Value::Reg(s),
                ty,
            } = i.kind
            {
                if let (Some(&g), true) = (base_of.get(&s), ty.bits() == 64) {
                    let after = only_def(s).is_some_and(|(d, _)| dominates(d, at));
                    if after && only_def(dst).is_some() && !base_of.contains_key(&dst) {
                        base_of.insert(dst, g);
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    // `%tid.x * size`, widened, defined before `at`: the offset of the
    // thread's slot (a definition that does not dominate its use leaves
    // lanes reading 0, which other threads' slots start at).
    let slot_offset = |r: Reg, at: At| -> Option<u64> {
        let (def, i) = only_def(r)?;
        let InstKind::Int {
            op: IntOp::MulWide,
            ty,
            args,
            ..
        } = &i.kind
        else {
            return None;
        };
        if ty.bits() != 32 {
            return None;
        }
        let (t, size) = match args[..] {
            [Value::Reg(t), Value::Imm(c)] | [Value::Imm(c), Value::Reg(t)] => (t, c),
            _ => return None,
        };
        let (tdef, ti) = only_def(t)?;
        let tid = matches!(
            ti.kind,
            InstKind::ReadSpecial {
                sreg: Special::Tid(0),
                ..
            }
        );
        (tid && dominates(tdef, def) && dominates(def, at)).then_some(size)
    };
    // Slot registers: `base + %tid.x * size`, with the variable and size.
    let mut slot: HashMap<Reg, (GlobalId, u64, At)> = HashMap::new();
    for (at, i) in insts() {
        let InstKind::Int {
            op: IntOp::Add,
            ty,
            dst,
            args,
        } = &i.kind
        else {
            continue;
        };
        if ty.bits() != 64 || only_def(*dst).is_none() {
            continue;
        }
        let base = |r: Reg| {
            let g = base_of.get(&r)?;
            only_def(r)
                .is_some_and(|(d, _)| dominates(d, at))
                .then_some(g)
        };
        let found = match args[..] {
            [Value::Reg(a), Value::Reg(b)] => base(a)
                .zip(slot_offset(b, at))
                .or_else(|| base(b).zip(slot_offset(a, at))),
            _ => None,
        };
        if let Some((&g, size)) = found {
            if size == 4 || size == 8 {
                slot.insert(*dst, (g, size, at));
            }
        }
    }
    // Every store or atomic that may reach shared memory must be a store
    // to a slot (a pointer from elsewhere could point into the array).
    let slot_store = |srcs: &[Value], addr: &Address, ty: Ty| {
        srcs.len() == 1
            && addr.offset == 0
            && matches!(addr.base, AddrBase::Reg(s)
                if slot.get(&s).is_some_and(|x| x.1 * 8 == u64::from(ty.bits())))
    };
    for (_, i) in insts() {
        let (space, whole) = match &i.kind {
            InstKind::St {
                space,
                addr,
                srcs,
                ty,
                ..
            } => (*space, slot_store(srcs, addr, *ty)),
            InstKind::Atom { space, .. } => (*space, false),
            _ => continue,
        };
        if space == Space::Generic || (space == Space::Shared && !whole) {
            return out;
        }
    }
    // Each variable: its slot registers, all of one size, defined before
    // every use, used only as load and store addresses; its base registers
    // used only to copy them and to make slots.
    let mut vars: HashMap<GlobalId, Vec<Reg>> = HashMap::new();
    for (&s, &(g, _, _)) in &slot {
        vars.entry(g).or_default().push(s);
    }
    for (&b, &g) in &base_of {
        let fine = used_at[b.0 as usize]
            .iter()
            .all(|&at| match &inst(at).kind {
                InstKind::Mov { dst, .. } => base_of.contains_key(dst),
                InstKind::Int { dst, .. } => slot.contains_key(dst),
                _ => false,
            });
        if !fine {
            bad.insert(g);
        }
    }
    // Written by name (`[sym+8]`): another thread's slot, or any. (Loads
    // by name are read below: a tree reduction's first thread reads its
    // total back from `[sym]`.)
    for (_, i) in insts() {
        if let InstKind::St { addr, .. } | InstKind::Atom { addr, .. } = &i.kind {
            if let AddrBase::Symbol(Symbol::Global(g)) = addr.base {
                bad.insert(g);
            }
        }
    }
    for (&g, ss) in &vars {
        let size = slot[&ss[0]].1;
        let fine = ss.iter().all(|s| {
            let (_, sz, def) = slot[s];
            sz == size
                && used_at[s.0 as usize].iter().all(|&at| {
                    dominates(def, at)
                        && match &inst(at).kind {
                            InstKind::Ld {
                                space: Space::Shared,
                                addr,
                                ..
                            } => addr.base == AddrBase::Reg(*s),
                            InstKind::St {
                                space: Space::Shared,
                                addr,
                                srcs,
                                ..
                            } => addr.base == AddrBase::Reg(*s) && !srcs.contains(&Value::Reg(*s)),
                            _ => false,
                        }
                })
        });
        if !fine {
            bad.insert(g);
        }
    }
    let float_of = |size: u64| if size == 8 { Ty::F64 } else { Ty::F32 };
    // What a store to a slot leaves there.
    let kind_of = |i: &Inst, size: u64| -> u8 {
        let InstKind::St { srcs, .. } = &i.kind else {
            return EXACT;
        };
        match srcs[0] {
            Value::Reg(r) if lazy[r.0 as usize] == Some(float_of(size)) => LAZY,
            Value::Imm(x) if keeps_its_bits(x, float_of(size)) => LAZY,
            _ => EXACT,
        }
    };
    // The instructions that may read what `at` writes to `d`: those
    // reached from it before an unguarded write of `d` (compilers reuse a
    // register: scan's zero for the first step is moved out of the
    // register a later step loads into).
    let reached_uses = |at: At, d: Reg| -> Vec<At> {
        let mut found = Vec::new();
        let mut seen: HashSet<BlockId> = HashSet::new();
        let mut todo: Vec<(BlockId, usize)> = vec![(at.0, at.1 + 1)];
        while let Some((b, from)) = todo.pop() {
            let blk = &f.blocks[b];
            let mut killed = false;
            for (k, i) in blk.insts.iter().enumerate().skip(from) {
                if uses(i).contains(&d) {
                    found.push((b, k));
                }
                if i.guard.is_none() && defs(&i.kind).contains(&d) {
                    killed = true;
                    break;
                }
            }
            if !killed {
                for t in succs(b.0 as usize) {
                    let t = BlockId(t as u32);
                    if seen.insert(t) {
                        todo.push((t, 0));
                    }
                }
            }
        }
        found
    };
    // Whether every reader of what `at` loads into `d` ignores a NaN's
    // payload.
    let payload_blind = |at: At, d: Reg| {
        reached_uses(at, d).into_iter().all(|at| {
            let i = inst(at);
            if i.guard.is_some_and(|(p, _)| p == d) {
                return false;
            }
            match &i.kind {
                InstKind::Float { op, ty, .. } => {
                    matches!(
                        op,
                        FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma
                    ) && matches!(ty, Ty::F32 | Ty::F64)
                }
                InstKind::Setp { ty, combine, .. } => {
                    matches!(ty, Ty::F32 | Ty::F64)
                        && !combine.is_some_and(|c| c.1 == Value::Reg(d))
                }
                _ => false,
            }
        })
    };
    // Branches on `%tid.x` against a constant: which way a thread goes
    // when its `%tid.x` is, or is not, a given value.
    let tid_reg = |r: Reg| {
        only_def(r).is_some_and(|(_, i)| {
            matches!(
                i.kind,
                InstKind::ReadSpecial {
                    sreg: Special::Tid(0),
                    ..
                }
            )
        })
    };
    let test_value = |pred: Reg, at: At, assume: Assume| -> Option<bool> {
        let (def, i) = only_def(pred)?;
        let InstKind::Setp {
            cmp,
            ty,
            dst,
            dst2,
            a,
            b,
            combine: None,
            ..
        } = &i.kind
        else {
            return None;
        };
        if !dominates(def, at) || ty.bits() != 32 || !matches!(ty, Ty::S32 | Ty::U32 | Ty::B32) {
            return None;
        }
        let (k, tid_left) = match (*a, *b) {
            (Value::Reg(t), Value::Imm(k)) if tid_reg(t) => (k as u32, true),
            (Value::Imm(k), Value::Reg(t)) if tid_reg(t) => (k as u32, false),
            _ => return None,
        };
        let holds = match assume {
            Assume::Is(c) => {
                let (x, y) = if tid_left { (c, k) } else { (k, c) };
                let signed = *ty == Ty::S32;
                let (sx, sy) = (x as i32, y as i32);
                match cmp {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Lt if signed => sx < sy,
                    CmpOp::Le if signed => sx <= sy,
                    CmpOp::Gt if signed => sx > sy,
                    CmpOp::Ge if signed => sx >= sy,
                    CmpOp::Lt | CmpOp::Lo => x < y,
                    CmpOp::Le | CmpOp::Ls => x <= y,
                    CmpOp::Gt | CmpOp::Hi => x > y,
                    CmpOp::Ge | CmpOp::Hs => x >= y,
                    _ => return None,
                }
            }
            Assume::IsNot(c) if c == k => match cmp {
                CmpOp::Eq => false,
                CmpOp::Ne => true,
                _ => return None,
            },
            Assume::IsNot(_) => return None,
        };
        if *dst == pred {
            Some(holds)
        } else if *dst2 == Some(pred) {
            Some(!holds)
        } else {
            None
        }
    };
    // The successors of block `b` a thread may go on to under `assume`.
    let next = |b: BlockId, assume: Option<Assume>| -> Vec<usize> {
        if let (
            Some(a),
            Some(Terminator::Branch {
                pred,
                negate,
                then,
                els,
            }),
        ) = (assume, &f.blocks[b].term)
        {
            let at = (b, f.blocks[b].insts.len());
            if let Some(v) = test_value(*pred, at, a) {
                let t = if v != *negate { then } else { els };
                return vec![t.0 as usize];
            }
        }
        succs(b.0 as usize)
    };
    // Whether an instruction with `guard` runs under `assume` (None: it
    // may or may not).
    let runs = |guard: Option<(Reg, bool)>, at: At, assume: Option<Assume>| match guard {
        None => Some(true),
        Some((p, neg)) => assume.and_then(|a| test_value(p, at, a)).map(|v| v != neg),
    };
    // Blocks some thread whose `%tid.x` is not `c` may run.
    let reached_unless = |c: u32| -> Vec<bool> {
        let mut seen = vec![false; nblocks];
        let mut todo = vec![entry.0 as usize];
        seen[entry.0 as usize] = true;
        while let Some(b) = todo.pop() {
            for t in next(BlockId(b as u32), Some(Assume::IsNot(c))) {
                if !seen[t] {
                    seen[t] = true;
                    todo.push(t);
                }
            }
        }
        seen
    };
    let mut order: Vec<GlobalId> = vars.keys().copied().filter(|g| !bad.contains(g)).collect();
    order.sort_by_key(|g| g.0);
    for g in order {
        let ss = &vars[&g];
        let size = slot[&ss[0]].1;
        let own_store = |i: &Inst| match &i.kind {
            InstKind::St { addr, .. } => matches!(addr.base, AddrBase::Reg(s) if ss.contains(&s)),
            _ => false,
        };
        let step = |state: u8, i: &Inst, at: At, assume: Option<Assume>| -> u8 {
            if !own_store(i) {
                return state;
            }
            let k = kind_of(i, size);
            match runs(i.guard, at, assume) {
                Some(true) => k,
                Some(false) => state,
                None => state | k,
            }
        };
        // What may be in the thread's slot where each block starts, for
        // threads of `assume` (data flow to a fixed point).
        let slot_states = |assume: Option<Assume>| -> Vec<u8> {
            let mut at_start = vec![0u8; nblocks];
            at_start[entry.0 as usize] = NOTHING;
            loop {
                let mut changed = false;
                for &b in &p.order {
                    if !live(b) || at_start[b.0 as usize] == 0 {
                        continue;
                    }
                    let end = f.blocks[b]
                        .insts
                        .iter()
                        .enumerate()
                        .fold(at_start[b.0 as usize], |s, (k, i)| {
                            step(s, i, (b, k), assume)
                        });
                    for t in next(b, assume) {
                        let merged = at_start[t] | end;
                        if merged != at_start[t] {
                            at_start[t] = merged;
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break at_start;
                }
            }
        };
        // The slot a load reads for the threads that run it: its own
        // (through a slot register), thread c's (by name, where only
        // thread c goes), or none known.
        let mut by_thread: HashMap<u32, Vec<u8>> = HashMap::new();
        let mut canon: Vec<At> = Vec::new();
        let mut fine = true;
        let everyone = slot_states(None);
        'blocks: for &b in &p.order {
            if !live(b) {
                continue;
            }
            let mut state = everyone[b.0 as usize];
            for (k, i) in f.blocks[b].insts.iter().enumerate() {
                if let InstKind::Ld { addr, ty, dsts, .. } = &i.kind {
                    let whole = dsts.len() == 1 && u64::from(ty.bits()) == size * 8;
                    let own_state = match addr.base {
                        AddrBase::Reg(s) if ss.contains(&s) => {
                            (whole && addr.offset == 0).then_some(state)
                        }
                        AddrBase::Symbol(Symbol::Global(h)) if h == g => {
                            let off = u64::try_from(addr.offset).ok();
                            let c = off
                                .filter(|o| whole && o % size == 0)
                                .and_then(|o| u32::try_from(o / size).ok());
                            match c {
                                Some(c) if !reached_unless(c)[b.0 as usize] => {
                                    let states = by_thread
                                        .entry(c)
                                        .or_insert_with(|| slot_states(Some(Assume::Is(c))));
                                    let at_b = states[b.0 as usize];
                                    Some(
                                        f.blocks[b].insts[..k]
                                            .iter()
                                            .enumerate()
                                            .fold(at_b, |s, (j, i)| {
                                                step(s, i, (b, j), Some(Assume::Is(c)))
                                            }),
                                    )
                                }
                                _ => None,
                            }
                        }
                        _ => {
                            state = step(state, i, (b, k), None);
                            continue;
                        }
                    };
                    let blind = dsts.iter().flatten().all(|d| payload_blind((b, k), *d));
                    // (0: no thread of the slot's gets here.)
                    let own = own_state.is_some_and(|st| st != 0 && st & !LAZY == 0);
                    if own && !blind {
                        canon.push((b, k));
                    } else if !blind {
                        fine = false;
                        break 'blocks;
                    }
                }
                state = step(state, i, (b, k), None);
            }
        }
        if !fine {
            continue;
        }
        for (at, i) in insts() {
            let stores_reg =
                matches!(&i.kind, InstKind::St { srcs, .. } if matches!(srcs[0], Value::Reg(_)));
            if own_store(i) && stores_reg && kind_of(i, size) == LAZY {
                out.raw_stores.insert(at);
            }
        }
        for at in canon {
            out.canon_loads.insert(at, float_of(size));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::own_slots;

    /// The analysis of kernel `name` of `tests/own_slots.ptx` (the
    /// runtime's), in one-dimensional blocks of 64 threads.
    fn analysed(name: &str) -> (usize, usize) {
        let src = include_str!("../../runtime/tests/kernels/own_slots.ptx");
        let m = warpfold_ptx::load(src).expect("parses");
        let (k, _) = m.kernels().find(|(_, f)| f.name == name).expect("kernel");
        let p = crate::prepare::prepare(&m, k, None, &|_| true).expect("prepares");
        let lazy = crate::uniform::lazily_canonical_floats(&p);
        let s = own_slots(&p, [64, 1, 1], &lazy);
        (s.raw_stores.len(), s.canon_loads.len())
    }

    #[test]
    fn a_scan_keeps_nans_in_its_slots_and_makes_the_last_read_canonical() {
        // The loaded input is stored exact; the two sums keep their NaNs.
        assert_eq!(analysed("scan2"), (2, 1));
    }

    #[test]
    fn a_tree_reduction_read_back_by_name_by_thread_0_only() {
        // Three sums keep their NaNs; thread 0's `[s]` is its own slot.
        assert_eq!(analysed("tree_sum"), (3, 1));
    }

    #[test]
    fn reads_that_may_see_exact_bits_or_show_nan_bits_keep_every_store_canonical() {
        for k in [
            "exact_or_sum",
            "neg_neighbour",
            "copy_neighbour",
            "guarded_back",
            "tree_sum_two",
            "other_reads_slot",
        ] {
            assert_eq!(analysed(k), (0, 0), "{k}");
        }
    }

    #[test]
    fn two_dimensional_blocks_share_slots_between_rows() {
        let src = include_str!("../../runtime/tests/kernels/own_slots.ptx");
        let m = warpfold_ptx::load(src).expect("parses");
        let (k, _) = m
            .kernels()
            .find(|(_, f)| f.name == "scan2")
            .expect("kernel");
        let p = crate::prepare::prepare(&m, k, None, &|_| true).expect("prepares");
        let lazy = crate::uniform::lazily_canonical_floats(&p);
        let s = own_slots(&p, [32, 2, 1], &lazy);
        assert!(s.raw_stores.is_empty() && s.canon_loads.is_empty());
    }
}
