//! Shared arrays that each thread writes only at its own slot: every
//! store goes to `sym + %tid.x * size` (one-dimensional blocks, so no two
//! threads share a slot). A thread's own slot then holds what its own last
//! store there wrote, whatever other threads do and wherever the barriers
//! are, so a data-flow pass inside one thread knows which stores a load of
//! it may read. Block scans and tree reductions keep their partial sums
//! like this (`s[t] += s[t - d]`, the total read back by thread 0 from
//! `s[0]`).
//!
//! What it decides: where a float stored into such an array may keep the
//! NaN the CPU made instead of being made canonical on its way to memory
//! (see `uniform::lazily_canonical_floats`). That is sound when every load
//! of the array either feeds only arithmetic and comparisons, which do not
//! look at a NaN's payload, or reads a slot whose owner stored lazily
//! canonical values only there, and makes what it read canonical itself.
//! A Hillis-Steele scan stores its running sum at every step and reads it
//! back as bits once at the end: eight canonicalisations per thread
//! become one (scan 3.2 -> 2.8 ms).

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

/// What may have been stored last in a thread's own slot (bits of a set;
/// 0 where no thread of the kind looked at gets).
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
    let Some(k) = Kernel::new(p) else {
        return out;
    };
    let Some(arrays) = Arrays::find(&k) else {
        return out;
    };
    for (g, slots) in arrays.qualifying(&k) {
        let array = Array {
            k: &k,
            g,
            size: arrays.slot[&slots[0]].1,
            slots,
            lazy,
        };
        let Some(canon) = array.canonicalising_loads() else {
            continue;
        };
        for (at, i) in k.insts() {
            let stores_reg =
                matches!(&i.kind, InstKind::St { srcs, .. } if matches!(srcs[0], Value::Reg(_)));
            if array.own_store(i) && stores_reg && array.kind_of(i) == LAZY {
                out.raw_stores.insert(at);
            }
        }
        for at in canon {
            out.canon_loads.insert(at, array.float());
        }
    }
    out
}

/// The kernel's control flow and where its registers are written and read.
struct Kernel<'a> {
    f: &'a Function,
    order: &'a [BlockId],
    entry: BlockId,
    dom: Dominators,
    def_at: Vec<Vec<At>>,
    used_at: Vec<Vec<At>>,
}

impl<'a> Kernel<'a> {
    /// None for kernels with calls, which may store anywhere through
    /// pointers they are passed.
    fn new(p: &'a Prepared) -> Option<Self> {
        let f = &p.func;
        let entry = *p.order.first()?;
        let succs = |b: usize| successors(f, BlockId(b as u32));
        let dom = Dominators::new(f.blocks.len(), entry.0 as usize, &succs);
        let mut def_at: Vec<Vec<At>> = vec![Vec::new(); f.regs.len()];
        let mut used_at: Vec<Vec<At>> = vec![Vec::new(); f.regs.len()];
        for (b, blk) in f.blocks.iter().filter(|(b, _)| dom.reachable(b.0 as usize)) {
            for (j, i) in blk.insts.iter().enumerate() {
                if matches!(
                    i.kind,
                    InstKind::Call { .. }
                        | InstKind::CallIndirect { .. }
                        | InstKind::Builtin { .. }
                ) {
                    return None;
                }
                for d in defs(&i.kind) {
                    def_at[d.0 as usize].push((b, j));
                }
                for r in uses(i) {
                    used_at[r.0 as usize].push((b, j));
                }
            }
        }
        Some(Kernel {
            f,
            order: &p.order,
            entry,
            dom,
            def_at,
            used_at,
        })
    }

    fn live(&self, b: BlockId) -> bool {
        self.dom.reachable(b.0 as usize)
    }

    /// Every instruction of the blocks the kernel can reach.
    fn insts(&self) -> impl Iterator<Item = (At, &'a Inst)> + '_ {
        let f = self.f;
        f.blocks
            .iter()
            .filter(move |(b, _)| self.live(*b))
            .flat_map(|(b, blk)| blk.insts.iter().enumerate().map(move |(k, i)| ((b, k), i)))
    }

    fn inst(&self, at: At) -> &'a Inst {
        &self.f.blocks[at.0].insts[at.1]
    }

    /// The one unguarded definition of `r`, when it has one.
    fn only_def(&self, r: Reg) -> Option<(At, &'a Inst)> {
        match self.def_at[r.0 as usize][..] {
            [at] if self.inst(at).guard.is_none() => Some((at, self.inst(at))),
            _ => None,
        }
    }

    /// Whether `a` runs before `b` wherever `b` runs.
    fn dominates(&self, a: At, b: At) -> bool {
        if a.0 == b.0 {
            a.1 < b.1
        } else {
            self.dom.dominates(a.0 .0 as usize, b.0 .0 as usize)
        }
    }

    /// `%tid.x`, read once.
    fn is_tid(&self, r: Reg) -> bool {
        self.only_def(r).is_some_and(|(_, i)| {
            matches!(
                i.kind,
                InstKind::ReadSpecial {
                    sreg: Special::Tid(0),
                    ..
                }
            )
        })
    }

    /// The instructions that may read what `at` writes to `d`: those
    /// reached from it before an unguarded write of `d` (compilers reuse
    /// a register: scan's zero for the first step is moved out of the
    /// register a later step loads into).
    fn reached_uses(&self, at: At, d: Reg) -> Vec<At> {
        let mut found = Vec::new();
        let mut seen: HashSet<BlockId> = HashSet::new();
        let mut todo: Vec<(BlockId, usize)> = vec![(at.0, at.1 + 1)];
        while let Some((b, from)) = todo.pop() {
            let mut killed = false;
            for (k, i) in self.f.blocks[b].insts.iter().enumerate().skip(from) {
                if uses(i).contains(&d) {
                    found.push((b, k));
                }
                if i.guard.is_none() && defs(&i.kind).contains(&d) {
                    killed = true;
                    break;
                }
            }
            if !killed {
                for t in successors(self.f, b) {
                    if seen.insert(BlockId(t as u32)) {
                        todo.push((BlockId(t as u32), 0));
                    }
                }
            }
        }
        found
    }

    /// Whether every reader of what `at` loads into `d` ignores a NaN's
    /// payload: float add, subtract, multiply, fma and compare.
    fn payload_blind(&self, at: At, d: Reg) -> bool {
        self.reached_uses(at, d).into_iter().all(|at| {
            let i = self.inst(at);
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
    }

    /// Predicate `pred` at `at` for threads of `assume`, when it compares
    /// `%tid.x` with a constant and that tells.
    fn tid_test(&self, pred: Reg, at: At, assume: Assume) -> Option<bool> {
        let (def, i) = self.only_def(pred)?;
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
        if !self.dominates(def, at) || !matches!(ty, Ty::S32 | Ty::U32 | Ty::B32) {
            return None;
        }
        let (k, tid_left) = match (*a, *b) {
            (Value::Reg(t), Value::Imm(k)) if self.is_tid(t) => (k as u32, true),
            (Value::Imm(k), Value::Reg(t)) if self.is_tid(t) => (k as u32, false),
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
    }

    /// The successors of block `b` a thread of `assume` may go on to.
    fn next(&self, b: BlockId, assume: Option<Assume>) -> Vec<usize> {
        if let (
            Some(a),
            Some(Terminator::Branch {
                pred,
                negate,
                then,
                els,
            }),
        ) = (assume, &self.f.blocks[b].term)
        {
            let at = (b, self.f.blocks[b].insts.len());
            if let Some(v) = self.tid_test(*pred, at, a) {
                let t = if v != *negate { then } else { els };
                return vec![t.0 as usize];
            }
        }
        successors(self.f, b)
    }

    /// Whether an instruction with `guard` at `at` runs for threads of
    /// `assume` (None: it may or may not).
    fn runs(&self, guard: Option<(Reg, bool)>, at: At, assume: Option<Assume>) -> Option<bool> {
        match guard {
            None => Some(true),
            Some((p, neg)) => assume
                .and_then(|a| self.tid_test(p, at, a))
                .map(|v| v != neg),
        }
    }

    /// Per block: whether some thread whose `%tid.x` is not `c` may run it.
    fn reached_unless(&self, c: u32) -> Vec<bool> {
        let mut seen = vec![false; self.f.blocks.len()];
        let mut todo = vec![self.entry.0 as usize];
        seen[self.entry.0 as usize] = true;
        while let Some(b) = todo.pop() {
            for t in self.next(BlockId(b as u32), Some(Assume::IsNot(c))) {
                if !seen[t] {
                    seen[t] = true;
                    todo.push(t);
                }
            }
        }
        seen
    }
}

fn successors(f: &Function, b: BlockId) -> Vec<usize> {
    match &f.blocks[b].term {
        Some(Terminator::Jump(t)) => vec![t.0 as usize],
        Some(Terminator::Branch { then, els, .. }) => vec![then.0 as usize, els.0 as usize],
        _ => Vec::new(),
    }
}

/// The shared variables reached through slot registers
/// (`base + %tid.x * size`, `base` a copy of the variable's address).
struct Arrays {
    /// Registers holding a variable's address (its `addr.shared` and plain
    /// copies of that).
    base_of: HashMap<Reg, GlobalId>,
    /// Slot registers: the variable, the slot size and the definition.
    slot: HashMap<Reg, (GlobalId, u64, At)>,
    /// Variables reached otherwise too.
    bad: HashSet<GlobalId>,
}

impl Arrays {
    /// None when some store or atomic that may reach shared memory is not
    /// a store to a slot (a pointer from elsewhere could point into an
    /// array).
    fn find(k: &Kernel) -> Option<Arrays> {
        let mut a = Arrays {
            base_of: HashMap::new(),
            slot: HashMap::new(),
            bad: HashSet::new(),
        };
        for (_, i) in k.insts() {
            if let InstKind::AddrOf {
                dst,
                sym: Symbol::Global(g),
                space,
            } = i.kind
            {
                if space == Space::Shared && k.only_def(dst).is_some() {
                    a.base_of.insert(dst, g);
                } else {
                    a.bad.insert(g);
                }
            }
        }
        loop {
            let mut grew = false;
            for (at, i) in k.insts() {
                if let InstKind::Mov {
                    dst,
                    src: Value::Reg(s),
                    ty,
                } = i.kind
                {
                    if let (Some(&g), true) = (a.base_of.get(&s), ty.bits() == 64) {
                        let after = k.only_def(s).is_some_and(|(d, _)| k.dominates(d, at));
                        if after && k.only_def(dst).is_some() && !a.base_of.contains_key(&dst) {
                            a.base_of.insert(dst, g);
                            grew = true;
                        }
                    }
                }
            }
            if !grew {
                break;
            }
        }
        for (at, i) in k.insts() {
            let Some((dst, x, y)) = crate::uniform::add64(&i.kind) else {
                continue;
            };
            if k.only_def(dst).is_none() {
                continue;
            }
            let base = |r: Reg| {
                let g = a.base_of.get(&r)?;
                k.only_def(r)
                    .is_some_and(|(d, _)| k.dominates(d, at))
                    .then_some(*g)
            };
            let found = match (x, y) {
                (Value::Reg(x), Value::Reg(y)) => base(x)
                    .zip(slot_offset(k, y, at))
                    .or_else(|| base(y).zip(slot_offset(k, x, at))),
                _ => None,
            };
            if let Some((g, size @ (4 | 8))) = found {
                a.slot.insert(dst, (g, size, at));
            }
        }
        for (_, i) in k.insts() {
            let (space, to_slot) = match &i.kind {
                InstKind::St {
                    space,
                    addr,
                    srcs,
                    ty,
                    ..
                } => (*space, a.slot_store(srcs, addr, *ty)),
                InstKind::Atom { space, .. } => (*space, false),
                _ => continue,
            };
            if space == Space::Generic || (space == Space::Shared && !to_slot) {
                return None;
            }
        }
        Some(a)
    }

    /// A store of one `ty` value at offset 0 of a slot register of its size.
    fn slot_store(&self, srcs: &[Value], addr: &Address, ty: Ty) -> bool {
        srcs.len() == 1
            && addr.offset == 0
            && matches!(addr.base, AddrBase::Reg(s)
                if self.slot.get(&s).is_some_and(|x| x.1 * 8 == u64::from(ty.bits())))
    }

    /// Each variable left with its slot registers: all of one size,
    /// defined before every use, used only as load and store addresses; its
    /// base registers used only to copy them and to make slots; never
    /// written by name (`[sym+8]`: another thread's slot, or any).
    fn qualifying(&self, k: &Kernel) -> Vec<(GlobalId, Vec<Reg>)> {
        let mut bad = self.bad.clone();
        let mut vars: HashMap<GlobalId, Vec<Reg>> = HashMap::new();
        for (&s, &(g, _, _)) in &self.slot {
            vars.entry(g).or_default().push(s);
        }
        for (&b, &g) in &self.base_of {
            let fine = k.used_at[b.0 as usize]
                .iter()
                .all(|&at| match &k.inst(at).kind {
                    InstKind::Mov { dst, .. } => self.base_of.contains_key(dst),
                    InstKind::Int { dst, .. } => self.slot.contains_key(dst),
                    _ => false,
                });
            if !fine {
                bad.insert(g);
            }
        }
        for (_, i) in k.insts() {
            if let InstKind::St { addr, .. } | InstKind::Atom { addr, .. } = &i.kind {
                if let AddrBase::Symbol(Symbol::Global(g)) = addr.base {
                    bad.insert(g);
                }
            }
        }
        for (&g, ss) in &vars {
            let size = self.slot[&ss[0]].1;
            let fine = ss.iter().all(|s| {
                let (_, sz, def) = self.slot[s];
                sz == size
                    && k.used_at[s.0 as usize].iter().all(|&at| {
                        k.dominates(def, at)
                            && match &k.inst(at).kind {
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
                                } => {
                                    addr.base == AddrBase::Reg(*s)
                                        && !srcs.contains(&Value::Reg(*s))
                                }
                                _ => false,
                            }
                    })
            });
            if !fine {
                bad.insert(g);
            }
        }
        let mut out: Vec<(GlobalId, Vec<Reg>)> =
            vars.into_iter().filter(|(g, _)| !bad.contains(g)).collect();
        out.sort_by_key(|(g, _)| g.0);
        out
    }
}

/// `%tid.x * size`, widened, defined before `at`: the offset of the
/// thread's slot (a definition that does not dominate its use leaves lanes
/// reading 0, where another thread's slot starts).
fn slot_offset(k: &Kernel, r: Reg, at: At) -> Option<u64> {
    let (def, i) = k.only_def(r)?;
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
    let (tdef, _) = k.only_def(t)?;
    (k.is_tid(t) && k.dominates(tdef, def) && k.dominates(def, at)).then_some(size)
}

/// One qualifying shared variable.
struct Array<'k, 'a> {
    k: &'k Kernel<'a>,
    g: GlobalId,
    size: u64,
    slots: Vec<Reg>,
    lazy: &'k [Option<Ty>],
}

impl Array<'_, '_> {
    fn float(&self) -> Ty {
        if self.size == 8 {
            Ty::F64
        } else {
            Ty::F32
        }
    }

    fn own_store(&self, i: &Inst) -> bool {
        matches!(&i.kind, InstKind::St { addr, .. }
            if matches!(addr.base, AddrBase::Reg(s) if self.slots.contains(&s)))
    }

    /// What a store to a slot leaves there.
    fn kind_of(&self, i: &Inst) -> u8 {
        let InstKind::St { srcs, .. } = &i.kind else {
            return EXACT;
        };
        match srcs[0] {
            Value::Reg(r) if self.lazy[r.0 as usize] == Some(self.float()) => LAZY,
            Value::Imm(x) if keeps_its_bits(x, self.float()) => LAZY,
            _ => EXACT,
        }
    }

    /// The slot after instruction `i` at `at`, for threads of `assume`.
    fn step(&self, state: u8, i: &Inst, at: At, assume: Option<Assume>) -> u8 {
        if !self.own_store(i) {
            return state;
        }
        let kind = self.kind_of(i);
        match self.k.runs(i.guard, at, assume) {
            Some(true) => kind,
            Some(false) => state,
            None => state | kind,
        }
    }

    /// What may be in the thread's slot where each block starts, for
    /// threads of `assume` (data flow to a fixed point).
    fn slot_states(&self, assume: Option<Assume>) -> Vec<u8> {
        let f = self.k.f;
        let mut at_start = vec![0u8; f.blocks.len()];
        at_start[self.k.entry.0 as usize] = NOTHING;
        loop {
            let mut changed = false;
            for &b in self.k.order {
                if !self.k.live(b) || at_start[b.0 as usize] == 0 {
                    continue;
                }
                let end = self.upto(b, f.blocks[b].insts.len(), at_start[b.0 as usize], assume);
                for t in self.k.next(b, assume) {
                    let merged = at_start[t] | end;
                    if merged != at_start[t] {
                        at_start[t] = merged;
                        changed = true;
                    }
                }
            }
            if !changed {
                return at_start;
            }
        }
    }

    /// The slot before instruction `end` of block `b`, from `state` at
    /// its start.
    fn upto(&self, b: BlockId, end: usize, state: u8, assume: Option<Assume>) -> u8 {
        self.k.f.blocks[b].insts[..end]
            .iter()
            .enumerate()
            .fold(state, |s, (k, i)| self.step(s, i, (b, k), assume))
    }

    /// The loads of the array that make what they read canonical, or None
    /// when some load may show a NaN's payload otherwise. A load reads its
    /// thread's own slot (through a slot register), thread c's (by name,
    /// in a block no other thread reaches), or one not known.
    fn canonicalising_loads(&self) -> Option<Vec<At>> {
        let k = self.k;
        let everyone = self.slot_states(None);
        // Per thread c that reads its slot by name: the blocks other
        // threads reach, and what may be in c's slot where each starts.
        let mut by_thread: HashMap<u32, (Vec<bool>, Vec<u8>)> = HashMap::new();
        let mut canon = Vec::new();
        for &b in k.order {
            if !k.live(b) {
                continue;
            }
            let mut state = everyone[b.0 as usize];
            for (j, i) in k.f.blocks[b].insts.iter().enumerate() {
                let before = state;
                state = self.step(state, i, (b, j), None);
                let InstKind::Ld { addr, ty, dsts, .. } = &i.kind else {
                    continue;
                };
                let whole = dsts.len() == 1 && u64::from(ty.bits()) == self.size * 8;
                let owner_state = match addr.base {
                    AddrBase::Reg(s) if self.slots.contains(&s) => {
                        (whole && addr.offset == 0).then_some(before)
                    }
                    AddrBase::Symbol(Symbol::Global(h)) if h == self.g => {
                        let c = u64::try_from(addr.offset)
                            .ok()
                            .filter(|o| whole && o % self.size == 0)
                            .and_then(|o| u32::try_from(o / self.size).ok());
                        c.and_then(|c| {
                            let only_c = Some(Assume::Is(c));
                            let (others, states) = by_thread
                                .entry(c)
                                .or_insert_with(|| (k.reached_unless(c), self.slot_states(only_c)));
                            (!others[b.0 as usize])
                                .then(|| self.upto(b, j, states[b.0 as usize], only_c))
                        })
                    }
                    _ => continue,
                };
                let blind = dsts.iter().flatten().all(|d| k.payload_blind((b, j), *d));
                let lazy_only = owner_state.is_some_and(|st| st != 0 && st & !LAZY == 0);
                if lazy_only && !blind {
                    canon.push((b, j));
                } else if !blind {
                    return None;
                }
            }
        }
        Some(canon)
    }
}

#[cfg(test)]
mod tests {
    use super::own_slots;

    /// The analysis of kernel `name` of `tests/own_slots.ptx` (the
    /// runtime's), in one-dimensional blocks of 64 threads.
    fn analysed(name: &str) -> (usize, usize) {
        let src = include_str!("../../runtime/tests/kernels/own_slots.ptx");
        let p = crate::prepare::prepared(src, name);
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
        let p = crate::prepare::prepared(src, "scan2");
        let lazy = crate::uniform::lazily_canonical_floats(&p);
        let s = own_slots(&p, [32, 2, 1], &lazy);
        assert!(s.raw_stores.is_empty() && s.canon_loads.is_empty());
    }
}
