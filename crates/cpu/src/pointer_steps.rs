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

use crate::lanes::Shape;
use crate::prepare::Prepared;
use std::collections::HashMap;
use warpfold_ir::*;

thread_local! {
    /// Pointers rewritten by compilations on this thread: for tests.
    pub(crate) static REWRITTEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `p`'s first write: `a + ext(i) * c`, the product written by the
/// instruction at `offset_at` of its block.
struct Start {
    base: Value,
    offset_at: usize,
    index: Reg,
    signed: bool,
    scale: u32,
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
fn candidates(p: &Prepared) -> bool {
    p.order.iter().any(|b| {
        p.func.blocks[*b].insts.iter().any(|i| match &i.kind {
            InstKind::Int { dst, .. } => stepping(i, *dst).is_some(),
            _ => false,
        })
    })
}

/// `WARPFOLD_POINTER_STEPS=off` leaves stepped pointers as they are.
fn enabled() -> bool {
    std::env::var("WARPFOLD_POINTER_STEPS").map_or(true, |v| v != "off")
}

/// Rewrite the stepped pointers of `p` (a kernel compiled for blocks of
/// `shape`; see the module comment). Returns how many it rewrote.
pub(crate) fn run(m: &Module, p: &mut Prepared, shape: Shape, grid_fits: bool) -> usize {
    if !enabled() || !candidates(p) {
        return 0;
    }
    let liveness = crate::uniform::liveness(p);
    let forms = crate::lanes::lane_forms(m, p, shape, grid_fits, 32, &liveness);
    // Per row where 32-lane warps hold several block rows.
    let rows = match crate::lanes::row_width(p, shape, 32) {
        Some(w) => {
            let bits: Vec<u32> = p.func.regs.values().map(|r| r.ty.bits()).collect();
            let floats = crate::uniform::lazily_canonical_floats(p);
            let warp = crate::lanes::Warp {
                forms: &forms.forms,
                convergent: &forms.convergent,
                vectors: &crate::emit::vector_registers(&bits, &floats),
            };
            crate::lanes::row_forms(m, p, (shape, grid_fits, w), &liveness, &warp)
        }
        None => Vec::new(),
    };
    let form = |r: Reg| forms.forms.get(r.0 as usize).copied().flatten();
    let facts = Facts {
        known: &|r| form(r).is_some() || rows.get(r.0 as usize).copied().flatten().is_some(),
        uniform: &|r| form(r).is_some_and(|l| l.is_uniform()),
        convergent: &forms.convergent,
    };
    let stepped = find(p, &facts);
    let count = stepped.len();
    if count > 0 {
        apply(p, &stepped);
        REWRITTEN.with(|c| c.set(c.get() + count));
    }
    count
}

/// What `find` knows of the kernel's lanes.
struct Facts<'a> {
    /// Registers whose lanes follow a form (in the warp or in each row).
    known: &'a dyn Fn(Reg) -> bool,
    /// Registers the same in every lane.
    uniform: &'a dyn Fn(Reg) -> bool,
    /// Blocks every live lane runs together (by block id).
    convergent: &'a [bool],
}

/// The pointers of `p` to rewrite, each with a register for its steps.
fn find(p: &mut Prepared, facts: &Facts) -> Vec<Stepped> {
    let f = &p.func;
    let n = f.regs.len();
    let Some(&entry) = p.order.first() else {
        return Vec::new();
    };
    let dom = crate::dom::Dominators::new(f.blocks.len(), entry.0 as usize, &|b| {
        crate::lanes::succs(&f.blocks[BlockId(b as u32)])
            .iter()
            .map(|s| s.0 as usize)
            .collect()
    });
    let reached: Vec<BlockId> = p
        .order
        .iter()
        .copied()
        .filter(|b| dom.reachable(b.0 as usize))
        .collect();
    // Every register's writes.
    let mut defs: Vec<Vec<Site>> = vec![Vec::new(); n];
    for &b in &reached {
        for (ix, i) in f.blocks[b].insts.iter().enumerate() {
            for d in crate::uniform::defs(&i.kind) {
                defs[d.0 as usize].push((b, ix));
            }
        }
    }
    let cx = Context {
        f,
        dom: &dom,
        reached: &reached,
        defs: &defs,
        facts,
    };
    let mut found: Vec<(Reg, Start, Site, Vec<(Site, Value)>)> =
        (0..n).filter_map(|r| cx.candidate(Reg(r as u32))).collect();
    // A pointer whose start or step reads another one being rewritten
    // would read it without that one's steps: it stays as it is (and its
    // reads of the other are made again like any other read).
    loop {
        let regs: Vec<Reg> = found.iter().map(|c| c.0).collect();
        let reads_one = |v: &Value| matches!(v, Value::Reg(r) if regs.contains(r));
        let before = found.len();
        found.retain(|(_, start, _, steps)| {
            !reads_one(&start.base) && !steps.iter().any(|(_, s)| reads_one(s))
        });
        if found.len() == before {
            break;
        }
    }
    found
        .into_iter()
        .map(|(reg, start, set_at, steps_at)| {
            let name = format!("{}_steps", p.func.regs[reg].name);
            let steps = p.func.regs.push(RegInfo { name, ty: Ty::U64 });
            Stepped {
                reg,
                start,
                set_at,
                steps_at,
                steps,
            }
        })
        .collect()
}

/// An instruction: its block and its index there.
type Site = (BlockId, usize);

/// The function `find` looks at, and what it has worked out.
struct Context<'a> {
    f: &'a Function,
    dom: &'a crate::dom::Dominators,
    /// The blocks the entry reaches, in order.
    reached: &'a [BlockId],
    /// Each register's writes.
    defs: &'a [Vec<Site>],
    facts: &'a Facts<'a>,
}

impl Context<'_> {
    fn inst(&self, (b, ix): Site) -> &Inst {
        &self.f.blocks[b].insts[ix]
    }

    /// Whether `a` runs before `b` wherever `b` runs.
    fn before(&self, (ab, ai): Site, (bb, bi): Site) -> bool {
        if ab == bb {
            ai < bi
        } else {
            self.dom.dominates(ab.0 as usize, bb.0 as usize)
        }
    }

    fn runs_together(&self, (b, _): Site) -> bool {
        self.facts
            .convergent
            .get(b.0 as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Whether register `r` may be written after `at` (a later
    /// instruction of its block, or any block reachable from there): else
    /// its value wherever `at` has run is the one it had there.
    fn written_after(&self, r: Reg, (b, ix): Site) -> bool {
        let ds = &self.defs[r.0 as usize];
        if ds.iter().any(|&(db, dix)| db == b && dix > ix) {
            return true;
        }
        let mut seen = vec![false; self.f.blocks.len()];
        let mut stack: Vec<BlockId> = crate::lanes::succs(&self.f.blocks[b]);
        while let Some(x) = stack.pop() {
            if std::mem::replace(&mut seen[x.0 as usize], true) {
                continue;
            }
            if ds.iter().any(|&(db, _)| db == x) {
                return true;
            }
            stack.extend(crate::lanes::succs(&self.f.blocks[x]));
        }
        false
    }

    /// `reg` as a pointer to rewrite: its start, where it is set, and
    /// where it steps by how much.
    #[allow(clippy::type_complexity)]
    fn candidate(&self, reg: Reg) -> Option<(Reg, Start, Site, Vec<(Site, Value)>)> {
        if self.f.regs[reg].ty.bits() != 64 {
            return None;
        }
        // One write sets `p`, the others step it.
        let (sets, steps): (Vec<Site>, Vec<Site>) = self.defs[reg.0 as usize]
            .iter()
            .partition(|&&d| stepping(self.inst(d), reg).is_none());
        let [set_at] = sets[..] else { return None };
        if steps.is_empty() || self.inst(set_at).guard.is_some() || !self.runs_together(set_at) {
            return None;
        }
        let steps_at: Vec<(Site, Value)> = steps
            .into_iter()
            .filter_map(|d| Some((d, stepping(self.inst(d), reg)?)))
            .collect();
        // (Any step is exact; uniform ones keep the steps one scalar.)
        let steps_fine = steps_at.iter().all(|&(d, step)| {
            self.inst(d).guard.is_none()
                && self.before(set_at, d)
                && self.runs_together(d)
                && match step {
                    Value::Imm(_) => true,
                    Value::Reg(s) => (self.facts.uniform)(s),
                }
        });
        if !steps_fine {
            return None;
        }
        // The offset's write: the last before `p`'s in its block, with
        // the index not written between them.
        let insts = &self.f.blocks[set_at.0].insts;
        let writes = |k: usize, r: Reg| crate::uniform::defs(&insts[k].kind).contains(&r);
        let offset_at = |t: Reg| (0..set_at.1).rev().find(|&k| writes(k, t));
        let start = start(self.inst(set_at), reg, |t| {
            offset_at(t).map(|k| (k, &insts[k]))
        })?;
        if (start.offset_at + 1..set_at.1).any(|j| writes(j, start.index)) {
            return None;
        }
        let base_fine = match start.base {
            Value::Imm(_) => true,
            Value::Reg(a) => (self.facts.uniform)(a) && !self.written_after(a, set_at),
        };
        if !base_fine || !(self.facts.known)(start.index) || self.written_after(start.index, set_at)
        {
            return None;
        }
        // Every read comes after the set and is of a kind `apply` rewrites.
        for &b in self.reached {
            for (ix, i) in self.f.blocks[b].insts.iter().enumerate() {
                let at = (b, ix);
                if steps_at.iter().any(|&(d, _)| d == at) || !crate::uniform::uses(i).contains(&reg)
                {
                    continue;
                }
                if !self.before(set_at, at) || !reads_rewritable(&i.kind, reg) {
                    return None;
                }
            }
        }
        Some((reg, start, set_at, steps_at))
    }
}

/// `p += s` (either operand order): `s`.
fn stepping(i: &Inst, p: Reg) -> Option<Value> {
    match crate::uniform::add64(&i.kind)? {
        (dst, Value::Reg(x), s) | (dst, s, Value::Reg(x))
            if dst == p && x == p && s != Value::Reg(p) =>
        {
            Some(s)
        }
        _ => None,
    }
}

/// `p = a + t` with `t = mul.wide i, c` (either operand order), `def`
/// giving the write of `t` that `p`'s reads (its index and itself).
fn start<'a>(i: &Inst, p: Reg, def: impl Fn(Reg) -> Option<(usize, &'a Inst)>) -> Option<Start> {
    let (dst, x, y) = crate::uniform::add64(&i.kind)?;
    if dst != p {
        return None;
    }
    // (The same products as `indexed` finds, so the reads become its form.)
    let wide = |v: Value| -> Option<(usize, Reg, bool, u32)> {
        let Value::Reg(t) = v else { return None };
        let (at, d) = def(t)?;
        match &d.kind {
            InstKind::Int {
                op: IntOp::MulWide,
                ty,
                args,
                dst,
            } if d.guard.is_none() && *dst == t => {
                let (x, signed, c) = crate::indexed::wide_index(*ty, args)?;
                Some((at, x, signed, c))
            }
            _ => None,
        }
    };
    let (base, (offset_at, index, signed, scale)) = match (wide(x), wide(y)) {
        (_, Some(w)) => (x, w),
        (Some(w), None) => (y, w),
        _ => return None,
    };
    Some(Start {
        base,
        offset_at,
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
                    args: vec![
                        Value::Reg(s.start.index),
                        Value::Imm(u64::from(s.start.scale)),
                    ],
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
