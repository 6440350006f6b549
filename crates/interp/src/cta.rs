//! One CTA: its threads, warps in lock-step groups, barriers and warp
//! collectives, and the per-thread execution of every instruction.

use crate::alu::{self, sx, zx};
use crate::error::{bad_function_pointer, ExecError, Fault, FaultKind};
use crate::instance::Instance;
use crate::memory::{
    self, MemoryMap, CONST_WINDOW, FUNC_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW,
    WINDOW_SIZE,
};
use crate::{LaunchConfig, WARP};
use std::cmp::Ordering as CmpOrd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use warpfold_ir::*;

pub(crate) struct LaunchCtx<'a> {
    pub module: &'a Module,
    pub inst: &'a Instance,
    pub map: MemoryMap,
    pub kernel: FuncId,
    pub name: String,
    pub cfg: LaunchConfig,
    pub params: &'a [u8],
    pub dyn_base: u64,
    pub shared_total: u64,
    pub shared_offsets: &'a std::collections::HashMap<GlobalId, u64>,
    pub start: Instant,
    pub deadline: Option<Instant>,
    pub cancel: AtomicBool,
    pub nsm: u32,
    pub printf: Option<std::sync::Arc<std::sync::Mutex<String>>>,
}

/// Deepest call stack and largest local memory per thread.
const MAX_FRAMES: usize = 4096;
const MAX_LOCAL: usize = 1 << 22;
/// Lock-step steps a warp runs before the next warp gets a turn (so warps
/// spinning on each other through shared memory make progress).
const WARP_SLICE: u32 = 4096;
/// Atomics and volatile loads one group may execute while other ready
/// lanes of its warp wait, before the earliest-first rule is suspended for
/// one turn: a group spinning on memory may be waiting for a lane that is
/// further along (intra-warp locks), and independent thread scheduling
/// guarantees that lane progress. Loops without such accesses cannot be
/// waiting on anyone, so they keep the lanes reconverging.
const SPIN_PATIENCE: u32 = 256;

struct Frame {
    func: FuncId,
    block: BlockId,
    idx: u32,
    regs: Vec<u64>,
    local_base: u64,
    /// Where the caller wants the results.
    rets: Vec<CallArg>,
}

#[derive(Clone, Copy, PartialEq)]
enum CollKind {
    Shfl(ShflMode),
    Vote(VoteMode),
    Match(bool),
    Redux(ReduxOp),
    Sync,
}

#[derive(Clone)]
struct Pending {
    kind: CollKind,
    ty: Ty,
    vals: [u64; 3],
    mask: u32,
    dst: Option<Reg>,
    pred_dst: Option<Reg>,
    line: u32,
}

#[derive(Clone)]
enum State {
    Ready,
    Exited,
    Barrier {
        id: usize,
        line: u32,
        site: (FuncId, BlockId, u32),
        red_dst: Option<Reg>,
    },
    Collective(Box<Pending>),
}

struct Thread {
    frames: Vec<Frame>,
    local: Vec<u8>,
    state: State,
    tid: [u32; 3],
}

#[derive(Default, Clone)]
struct Barrier {
    arrived: u32,
    expected: Option<u32>,
    waiting: Vec<usize>,
    popc: u32,
    all: bool,
    any: bool,
    red: Option<BarRed>,
}

pub(crate) struct Cta<'c, 'a> {
    ctx: &'c LaunchCtx<'a>,
    ctaid: [u32; 3],
    smid: u32,
    shared: Vec<u8>,
    threads: Vec<Thread>,
    barriers: Vec<Barrier>,
    /// Per warp: spin-like accesses by the current group while others wait.
    spin: Vec<u32>,
    steps: u64,
    executed: u64,
}

type Res<T> = Result<T, ExecError>;

pub(crate) fn run_cta(ctx: &LaunchCtx, ctaid: [u32; 3], smid: u32) -> Res<u64> {
    let func = &ctx.module.functions[ctx.kernel];
    let b = ctx.cfg.block;
    let n = (b[0] * b[1] * b[2]) as usize;
    let mut threads = Vec::with_capacity(n);
    for i in 0..n as u32 {
        let tid = [i % b[0], (i / b[0]) % b[1], i / (b[0] * b[1])];
        threads.push(Thread {
            frames: vec![Frame {
                func: ctx.kernel,
                block: func.entry,
                idx: 0,
                regs: vec![0; func.regs.len()],
                local_base: 0,
                rets: Vec::new(),
            }],
            local: vec![0; func.frame_size as usize],
            state: State::Ready,
            tid,
        });
    }
    let mut cta = Cta {
        ctx,
        ctaid,
        smid,
        shared: vec![0; ctx.shared_total as usize],
        threads,
        barriers: vec![Barrier::default(); 16],
        spin: vec![0; n.div_ceil(WARP)],
        steps: 0,
        executed: 0,
    };
    cta.run()?;
    Ok(cta.executed)
}

impl<'c, 'a> Cta<'c, 'a> {
    fn nwarps(&self) -> usize {
        self.threads.len().div_ceil(WARP)
    }

    fn lanes(&self, w: usize) -> std::ops::Range<usize> {
        w * WARP..((w + 1) * WARP).min(self.threads.len())
    }

    fn run(&mut self) -> Res<()> {
        loop {
            let mut progress = false;
            for w in 0..self.nwarps() {
                progress |= self.run_warp(w)?;
            }
            progress |= self.release_barriers()?;
            if self
                .threads
                .iter()
                .all(|t| matches!(t.state, State::Exited))
            {
                return Ok(());
            }
            if !progress {
                return Err(self.deadlock());
            }
        }
    }

    fn fault(&self, t: usize, line: u32, kind: FaultKind) -> ExecError {
        ExecError::Fault(Box::new(Fault {
            kernel: self.ctx.name.clone(),
            block: self.ctaid,
            thread: self.threads[t].tid,
            line,
            kind,
        }))
    }

    /// Compare two lanes' program counters: call stacks lexicographically by
    /// (block, index), a caller's position before its callee's.
    fn pc_cmp(&self, a: usize, b: usize) -> CmpOrd {
        let (fa, fb) = (&self.threads[a].frames, &self.threads[b].frames);
        for (x, y) in fa.iter().zip(fb.iter()) {
            let o = (x.func, x.block, x.idx).cmp(&(y.func, y.block, y.idx));
            if o != CmpOrd::Equal {
                return o;
            }
        }
        fa.len().cmp(&fb.len())
    }

    /// The ready lanes of warp `w` at the earliest (or, for one turn after a
    /// long wait, the latest) program counter.
    fn pick_group(&self, w: usize, latest: bool) -> u32 {
        let mut best: Option<usize> = None;
        let mut group = 0u32;
        for t in self.lanes(w) {
            if !matches!(self.threads[t].state, State::Ready) {
                continue;
            }
            match best {
                None => {
                    best = Some(t);
                    group = 1 << (t - w * WARP);
                }
                Some(b) => {
                    let mut o = self.pc_cmp(t, b);
                    if latest {
                        o = o.reverse();
                    }
                    match o {
                        CmpOrd::Less => {
                            best = Some(t);
                            group = 1 << (t - w * WARP);
                        }
                        CmpOrd::Equal => group |= 1 << (t - w * WARP),
                        CmpOrd::Greater => {}
                    }
                }
            }
        }
        group
    }

    fn ready_count(&self, w: usize) -> u32 {
        self.lanes(w)
            .filter(|&t| matches!(self.threads[t].state, State::Ready))
            .count() as u32
    }

    fn run_warp(&mut self, w: usize) -> Res<bool> {
        let mut progress = false;
        let mut group = 0u32;
        for _ in 0..WARP_SLICE {
            if group == 0 {
                group = self.pick_group(w, false);
                if group == 0 {
                    return Ok(progress);
                }
            }
            progress = true;
            self.tick()?;
            if self.spin_like(w, group) {
                self.spin[w] += 1;
                if self.spin[w] > SPIN_PATIENCE && self.ready_count(w) > group.count_ones() {
                    self.spin[w] = 0;
                    group = self.pick_group(w, true);
                }
            }
            let same = self.step(w, group)?;
            // Re-pick at every block start too: lanes that left a loop
            // earlier wait there, and merging them is what reconverges.
            if !same || self.at_block_start(w, group) {
                group = 0;
            }
        }
        Ok(progress)
    }

    fn at_block_start(&self, w: usize, group: u32) -> bool {
        let leader = w * WARP + group.trailing_zeros() as usize;
        self.threads[leader]
            .frames
            .last()
            .is_some_and(|f| f.idx == 0)
    }

    /// Whether the group's next instruction is an atomic or volatile load
    /// (what a spin-wait loop polls).
    fn spin_like(&self, w: usize, group: u32) -> bool {
        let leader = w * WARP + group.trailing_zeros() as usize;
        let Some(f) = self.threads[leader].frames.last() else {
            return false;
        };
        let func = &self.ctx.module.functions[f.func];
        matches!(
            func.blocks[f.block]
                .insts
                .get(f.idx as usize)
                .map(|i| &i.kind),
            Some(InstKind::Atom { .. }) | Some(InstKind::Ld { volatile: true, .. })
        )
    }

    fn tick(&mut self) -> Res<()> {
        self.steps += 1;
        if self.steps.is_multiple_of(4096) {
            if self.ctx.cancel.load(Ordering::Relaxed) {
                return Err(ExecError::Cancelled);
            }
            if let Some(d) = self.ctx.deadline {
                if Instant::now() > d {
                    let secs = d.saturating_duration_since(self.ctx.start).as_secs_f64();
                    return Err(ExecError::Timeout {
                        kernel: self.ctx.name.clone(),
                        secs,
                    });
                }
            }
        }
        Ok(())
    }

    fn val(&self, t: usize, v: Value) -> u64 {
        match v {
            Value::Reg(r) => self.threads[t]
                .frames
                .last()
                .map_or(0, |f| f.regs[r.0 as usize]),
            Value::Imm(x) => x,
        }
    }

    fn set(&mut self, t: usize, r: Reg, v: u64) {
        if let Some(f) = self.threads[t].frames.last_mut() {
            f.regs[r.0 as usize] = v;
        }
    }

    /// Execute one instruction or terminator for the lanes in `group` (all
    /// at the same PC). Returns whether the group is still together at one PC.
    fn step(&mut self, w: usize, group: u32) -> Res<bool> {
        let leader = w * WARP + group.trailing_zeros() as usize;
        let module = self.ctx.module;
        let (fid, bid, idx) = {
            let f = self.threads[leader]
                .frames
                .last()
                .expect("a ready thread has a frame");
            (f.func, f.block, f.idx)
        };
        let func = &module.functions[fid];
        let block = &func.blocks[bid];
        let lanes: Vec<usize> = (0..WARP)
            .filter(|l| group & (1 << l) != 0)
            .map(|l| w * WARP + l)
            .collect();
        self.executed += lanes.len() as u64;
        if let Some(inst) = block.insts.get(idx as usize) {
            let active: Vec<usize> = lanes
                .iter()
                .copied()
                .filter(|&t| match inst.guard {
                    None => true,
                    Some((p, neg)) => (self.val(t, Value::Reg(p)) & 1 == 1) != neg,
                })
                .collect();
            // Advance past the instruction; a caller's frame stays at its
            // call until the callee returns, so lanes inside a call sort
            // before lanes already past it and reconverge after it.
            let is_call = matches!(
                inst.kind,
                InstKind::Call { .. } | InstKind::CallIndirect { .. }
            );
            for &t in &lanes {
                if is_call && active.contains(&t) {
                    continue;
                }
                if let Some(f) = self.threads[t].frames.last_mut() {
                    f.idx += 1;
                }
            }
            match &inst.kind {
                InstKind::Shfl { .. }
                | InstKind::Vote { .. }
                | InstKind::Match { .. }
                | InstKind::Redux { .. }
                | InstKind::WarpSync { .. } => {
                    for &t in &active {
                        let p = self.pending(t, inst);
                        self.threads[t].state = State::Collective(Box::new(p));
                    }
                    self.resolve_collectives(w)?;
                    return Ok(false);
                }
                InstKind::Activemask { dst } => {
                    let m = active.iter().fold(0u64, |m, &t| m | 1 << (t - w * WARP));
                    for &t in &active {
                        self.set(t, *dst, m);
                    }
                }
                InstKind::Bar { .. } => {
                    let any = !active.is_empty();
                    for &t in &active {
                        self.arrive(t, inst, (fid, bid, idx))?;
                    }
                    return Ok(!any);
                }
                InstKind::Call {
                    func: callee,
                    args,
                    rets,
                } => {
                    for &t in &active {
                        self.call(t, *callee, args, rets, inst.loc.line)?;
                    }
                    return Ok(active.is_empty() || active.len() == lanes.len());
                }
                InstKind::CallIndirect { target, args, rets } => {
                    // Lanes calling different functions diverge: each call
                    // pushes its own frame, and the scheduler regroups them.
                    for &t in &active {
                        let callee = self.indirect_target(
                            t,
                            *target,
                            args.len(),
                            rets.len(),
                            inst.loc.line,
                        )?;
                        self.call(t, callee, args, rets, inst.loc.line)?;
                    }
                    return Ok(false);
                }
                _ => {
                    for &t in &active {
                        self.exec(t, inst)?;
                    }
                }
            }
            return Ok(true);
        }
        // Terminator.
        let Some(term) = &block.term else {
            return Ok(false);
        };
        match term {
            Terminator::Jump(b) => {
                for &t in &lanes {
                    let f = self.threads[t].frames.last_mut().expect("frame");
                    f.block = *b;
                    f.idx = 0;
                }
                Ok(true)
            }
            Terminator::Branch {
                pred,
                negate,
                then,
                els,
            } => {
                let mut taken = 0;
                for &t in &lanes {
                    let c = (self.val(t, Value::Reg(*pred)) & 1 == 1) != *negate;
                    taken += u32::from(c);
                    let f = self.threads[t].frames.last_mut().expect("frame");
                    f.block = if c { *then } else { *els };
                    f.idx = 0;
                }
                Ok(taken == 0 || taken as usize == lanes.len())
            }
            Terminator::Return => {
                for &t in &lanes {
                    self.ret(t)?;
                }
                Ok(false)
            }
            Terminator::Exit => {
                for &t in &lanes {
                    self.threads[t].state = State::Exited;
                }
                // Lanes that exit no longer hold up collectives or barriers.
                self.resolve_collectives(w)?;
                Ok(false)
            }
        }
    }

    fn pending(&self, t: usize, inst: &Inst) -> Pending {
        let v = |x: Value| self.val(t, x);
        let line = inst.loc.line;
        match &inst.kind {
            InstKind::Shfl {
                mode,
                dst,
                pred_dst,
                a,
                b,
                c,
                mask,
            } => Pending {
                kind: CollKind::Shfl(*mode),
                ty: Ty::B32,
                vals: [v(*a), v(*b), v(*c)],
                mask: v(*mask) as u32,
                dst: Some(*dst),
                pred_dst: *pred_dst,
                line,
            },
            InstKind::Vote {
                mode,
                dst,
                a,
                negate,
                mask,
            } => Pending {
                kind: CollKind::Vote(*mode),
                ty: Ty::Pred,
                vals: [u64::from((v(*a) & 1 == 1) != *negate), 0, 0],
                mask: v(*mask) as u32,
                dst: Some(*dst),
                pred_dst: None,
                line,
            },
            InstKind::Match {
                all,
                ty,
                dst,
                pred_dst,
                a,
                mask,
            } => Pending {
                kind: CollKind::Match(*all),
                ty: *ty,
                vals: [zx(v(*a), ty.bits()), 0, 0],
                mask: v(*mask) as u32,
                dst: Some(*dst),
                pred_dst: *pred_dst,
                line,
            },
            InstKind::Redux {
                op,
                ty,
                dst,
                a,
                mask,
            } => Pending {
                kind: CollKind::Redux(*op),
                ty: *ty,
                vals: [zx(v(*a), 32), 0, 0],
                mask: v(*mask) as u32,
                dst: Some(*dst),
                pred_dst: None,
                line,
            },
            InstKind::WarpSync { mask } => Pending {
                kind: CollKind::Sync,
                ty: Ty::B32,
                vals: [0; 3],
                mask: v(*mask) as u32,
                dst: None,
                pred_dst: None,
                line,
            },
            _ => unreachable!("only collectives are pending"),
        }
    }

    /// Complete every collective of warp `w` whose participants have all arrived.
    fn resolve_collectives(&mut self, w: usize) -> Res<()> {
        let base = w * WARP;
        let mut live = 0u32;
        let mut waiting = 0u32;
        for t in self.lanes(w) {
            match &self.threads[t].state {
                State::Exited => {}
                State::Collective(_) => {
                    live |= 1 << (t - base);
                    waiting |= 1 << (t - base);
                }
                _ => live |= 1 << (t - base),
            }
        }
        if waiting == 0 {
            return Ok(());
        }
        let pend = |this: &Self, t: usize| match &this.threads[t].state {
            State::Collective(p) => Some((**p).clone()),
            _ => None,
        };
        let mut ready = Vec::new();
        for l in 0..WARP {
            if waiting & (1 << l) == 0 {
                continue;
            }
            let t = base + l;
            let p = pend(self, t).expect("waiting lane has a pending op");
            if p.mask & (1 << l) == 0 {
                return Err(self.fault(t, p.line, FaultKind::Warp(format!("lane {l} executes a warp operation whose member mask {:#010x} does not include it", p.mask))));
            }
            let part = p.mask & live;
            if part & !waiting != 0 {
                continue;
            }
            // Everyone named has arrived; those waiting at another kind of
            // operation (other divergent groups) hold this group until they
            // get here too. If that never happens the CTA reports a deadlock.
            let same = (0..WARP).all(|m| {
                part & (1 << m) == 0 || pend(self, base + m).is_some_and(|q| q.kind == p.kind)
            });
            if same {
                ready.push((t, p, part));
            }
        }
        let mut results = Vec::with_capacity(ready.len());
        for (t, p, part) in &ready {
            let lane = (*t - base) as u32;
            let value_of = |m: u32| pend(self, base + m as usize).map(|q| q.vals[0]);
            let (d, pd) = match p.kind {
                CollKind::Shfl(mode) => {
                    let (b, c) = (p.vals[1] as u32 & 0x1f, p.vals[2] as u32);
                    let cval = c & 0x1f;
                    let seg = (c >> 8) & 0x1f;
                    let max_lane = ((lane & seg) | (cval & !seg)) as i32;
                    let min_lane = lane & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => {
                            let j = lane as i32 - b as i32;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = lane as i32 + b as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = (lane ^ b) as i32;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = (min_lane | (b & !seg)) as i32;
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok { j as u32 } else { lane };
                    // A source lane that does not take part gives an
                    // unpredictable value on a GPU; we give the caller's own.
                    let v = if j < 32 && part & (1 << j) != 0 {
                        value_of(j).unwrap_or(p.vals[0])
                    } else {
                        p.vals[0]
                    };
                    (v, u64::from(ok))
                }
                CollKind::Vote(mode) => {
                    let mut ballot = 0u32;
                    for m in 0..32u32 {
                        if part & (1 << m) != 0 && value_of(m).unwrap_or(0) & 1 == 1 {
                            ballot |= 1 << m;
                        }
                    }
                    let v = match mode {
                        VoteMode::Ballot => u64::from(ballot),
                        VoteMode::All => u64::from(ballot == *part),
                        VoteMode::Any => u64::from(ballot != 0),
                        VoteMode::Uni => u64::from(ballot == *part || ballot == 0),
                    };
                    (v, 0)
                }
                CollKind::Match(all) => {
                    let mut same = 0u32;
                    for m in 0..32u32 {
                        if part & (1 << m) != 0 && value_of(m) == Some(p.vals[0]) {
                            same |= 1 << m;
                        }
                    }
                    if all {
                        if same == *part {
                            (u64::from(*part), 1)
                        } else {
                            (0, 0)
                        }
                    } else {
                        (u64::from(same), 0)
                    }
                }
                CollKind::Redux(op) => {
                    let signed = p.ty.is_signed();
                    let mut acc: Option<u64> = None;
                    for m in 0..32u32 {
                        if part & (1 << m) == 0 {
                            continue;
                        }
                        let x = value_of(m).unwrap_or(0);
                        acc = Some(match acc {
                            None => x,
                            Some(a) => match op {
                                ReduxOp::Add => zx(a.wrapping_add(x), 32),
                                ReduxOp::And => a & x,
                                ReduxOp::Or => a | x,
                                ReduxOp::Xor => a ^ x,
                                ReduxOp::Min if signed => zx(sx(a, 32).min(sx(x, 32)) as u64, 32),
                                ReduxOp::Max if signed => zx(sx(a, 32).max(sx(x, 32)) as u64, 32),
                                ReduxOp::Min => a.min(x),
                                ReduxOp::Max => a.max(x),
                            },
                        });
                    }
                    (acc.unwrap_or(0), 0)
                }
                CollKind::Sync => (0, 0),
            };
            results.push((*t, p.dst, p.pred_dst, d, pd));
        }
        for (t, dst, pdst, d, pd) in results {
            self.threads[t].state = State::Ready;
            if let Some(r) = dst {
                self.set(t, r, d);
            }
            if let Some(r) = pdst {
                self.set(t, r, pd);
            }
        }
        Ok(())
    }

    fn arrive(&mut self, t: usize, inst: &Inst, site: (FuncId, BlockId, u32)) -> Res<()> {
        let InstKind::Bar {
            kind,
            id,
            count,
            dst,
            pred,
        } = &inst.kind
        else {
            return Ok(());
        };
        let line = inst.loc.line;
        let id_v = self.val(t, *id);
        if id_v >= 16 {
            return Err(self.fault(
                t,
                line,
                FaultKind::Warp(format!("barrier id {id_v} is out of range 0..15")),
            ));
        }
        let count = count.map(|c| self.val(t, c) as u32);
        if let Some(c) = count {
            if c == 0 || c % 32 != 0 && c as usize != self.threads.len() {
                return Err(self.fault(
                    t,
                    line,
                    FaultKind::Warp(format!(
                        "barrier thread count {c} is not a multiple of the warp size"
                    )),
                ));
            }
        }
        let pv = pred.map(|(p, neg)| (self.val(t, p) & 1 == 1) != neg);
        let b = &mut self.barriers[id_v as usize];
        if let (Some(c), Some(e)) = (count, b.expected) {
            if c != e {
                return Err(self.fault(
                    t,
                    line,
                    FaultKind::Warp(format!(
                        "barrier {id_v} used with thread counts {e} and {c} at once"
                    )),
                ));
            }
        }
        if b.arrived == 0 {
            b.all = true;
            b.any = false;
            b.popc = 0;
        }
        b.expected = count.or(b.expected);
        b.arrived += 1;
        if let BarKind::Red(op) = kind {
            b.red = Some(*op);
            let p = pv.unwrap_or(false);
            b.popc += u32::from(p);
            b.all &= p;
            b.any |= p;
        }
        if *kind != BarKind::Arrive {
            b.waiting.push(t);
            self.threads[t].state = State::Barrier {
                id: id_v as usize,
                line,
                site,
                red_dst: *dst,
            };
        }
        Ok(())
    }

    /// Release every barrier whose expected number of threads has arrived.
    fn release_barriers(&mut self) -> Res<bool> {
        let live = self
            .threads
            .iter()
            .filter(|t| !matches!(t.state, State::Exited))
            .count() as u32;
        let mut released = false;
        for id in 0..self.barriers.len() {
            let b = &self.barriers[id];
            if b.arrived == 0 {
                continue;
            }
            let expected = b.expected.unwrap_or(live);
            let waiting_all = b.waiting.len() as u32 == live;
            if b.arrived < expected && !(b.expected.is_none() && waiting_all) {
                continue;
            }
            let b = std::mem::take(&mut self.barriers[id]);
            // A whole-CTA barrier reached at different places in the code
            // is almost always a bug (and undefined in CUDA): report it.
            if b.expected.is_none() {
                let mut first: Option<(usize, (FuncId, BlockId, u32), u32)> = None;
                for &t in &b.waiting {
                    if let State::Barrier { site, line, .. } = self.threads[t].state {
                        match first {
                            None => first = Some((t, site, line)),
                            Some((_, s, l)) if s != site => {
                                return Err(ExecError::BarrierDivergence {
                                    kernel: self.ctx.name.clone(),
                                    block: self.ctaid,
                                    detail: format!(
                                        "threads wait at different barriers: thread {:?} at PTX line {l}, thread {:?} at PTX line {line} (a CTA-wide barrier must be reached by all threads at the same place)",
                                        self.threads[first.map_or(0, |f| f.0)].tid, self.threads[t].tid
                                    ),
                                });
                            }
                            _ => {}
                        }
                    }
                }
            }
            for &t in &b.waiting {
                if let State::Barrier { red_dst, .. } = self.threads[t].state {
                    if let (Some(r), Some(op)) = (red_dst, b.red) {
                        let v = match op {
                            BarRed::Popc => u64::from(b.popc),
                            BarRed::And => u64::from(b.all),
                            BarRed::Or => u64::from(b.any),
                        };
                        self.set(t, r, v);
                    }
                }
                self.threads[t].state = State::Ready;
            }
            released = true;
        }
        Ok(released)
    }

    fn deadlock(&self) -> ExecError {
        let mut exited = 0;
        let mut at: std::collections::BTreeMap<String, (u32, [u32; 3])> = Default::default();
        for t in &self.threads {
            let key = match &t.state {
                State::Exited => {
                    exited += 1;
                    continue;
                }
                State::Barrier { id, line, .. } => format!("barrier {id} at PTX line {line}"),
                State::Collective(p) => format!("a warp operation at PTX line {}", p.line),
                State::Ready => "no barrier (runnable)".to_string(),
            };
            let e = at.entry(key).or_insert((0, t.tid));
            e.0 += 1;
        }
        let mut parts: Vec<String> = at
            .iter()
            .map(|(k, (n, first))| format!("{n} thread(s) wait at {k} (first: thread {first:?})"))
            .collect();
        if exited > 0 {
            parts.push(format!("{exited} thread(s) have exited"));
        }
        ExecError::Deadlock {
            kernel: self.ctx.name.clone(),
            block: self.ctaid,
            detail: format!("no thread can continue: {}", parts.join("; ")),
        }
    }

    fn call(
        &mut self,
        t: usize,
        callee: FuncId,
        args: &[CallArg],
        rets: &[CallArg],
        line: u32,
    ) -> Res<()> {
        let module = self.ctx.module;
        let f = &module.functions[callee];
        if self.threads[t].frames.len() >= MAX_FRAMES {
            return Err(self.fault(t, line, FaultKind::StackOverflow));
        }
        let th = &self.threads[t];
        let caller = th.frames.last().expect("frame");
        let caller_base = caller.local_base;
        let base = (th.local.len() as u64).div_ceil(16) * 16;
        let end = base + f.frame_size;
        if end as usize > MAX_LOCAL {
            return Err(self.fault(t, line, FaultKind::StackOverflow));
        }
        let caller_fn = &module.functions[caller.func];
        // Gather argument bytes from the caller first.
        let mut vals: Vec<Vec<u8>> = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&f.params) {
            let size = p.size as usize;
            let mut bytes = vec![0u8; size];
            match a {
                CallArg::Reg(r) => {
                    let v = caller.regs[r.0 as usize].to_le_bytes();
                    let n = size.min(8);
                    bytes[..n].copy_from_slice(&v[..n]);
                }
                CallArg::Imm(x) => {
                    let n = size.min(8);
                    bytes[..n].copy_from_slice(&x.to_le_bytes()[..n]);
                }
                CallArg::Local(l) => {
                    let off = (caller_base + caller_fn.locals[*l].offset) as usize;
                    let n = size.min(caller_fn.locals[*l].size as usize);
                    bytes[..n].copy_from_slice(&th.local[off..off + n]);
                }
            }
            vals.push(bytes);
        }
        let th = &mut self.threads[t];
        th.local.resize(end as usize, 0);
        th.local[base as usize..end as usize].fill(0);
        let mut regs = vec![0u64; f.regs.len()];
        for (bytes, p) in vals.iter().zip(&f.params) {
            match p.binding {
                ParamBinding::Local(l) => {
                    let off = (base + f.locals[l].offset) as usize;
                    th.local[off..off + bytes.len()].copy_from_slice(bytes);
                }
                ParamBinding::Reg(r) => {
                    let mut w = [0u8; 8];
                    let n = bytes.len().min(8);
                    w[..n].copy_from_slice(&bytes[..n]);
                    regs[r.0 as usize] = u64::from_le_bytes(w);
                }
                ParamBinding::KernelBuffer => {}
            }
        }
        th.frames.push(Frame {
            func: callee,
            block: f.entry,
            idx: 0,
            regs,
            local_base: base,
            rets: rets.to_vec(),
        });
        Ok(())
    }

    /// The function a pointer names, checked against the call's shape.
    fn indirect_target(
        &self,
        t: usize,
        target: Value,
        nargs: usize,
        nrets: usize,
        line: u32,
    ) -> Res<FuncId> {
        let p = self.val(t, target);
        let module = self.ctx.module;
        let id = p.wrapping_sub(FUNC_WINDOW) / 16;
        let ok = p >= FUNC_WINDOW && p.is_multiple_of(16) && (id as usize) < module.functions.len();
        let f = ok
            .then_some(FuncId(id as u32))
            .filter(|f| !module.functions[*f].is_kernel);
        match f {
            Some(f) if module.functions[f].params.len() == nargs && module.functions[f].returns.len() == nrets => Ok(f),
            Some(f) => Err(self.fault(
                t,
                line,
                FaultKind::Warp(format!("call through a pointer to `{}` with {nargs} arguments and {nrets} results; it takes {} and returns {}", module.functions[f].name, module.functions[f].params.len(), module.functions[f].returns.len())),
            )),
            None => Err(self.fault(t, line, bad_function_pointer(p))),
        }
    }

    fn ret(&mut self, t: usize) -> Res<()> {
        let module = self.ctx.module;
        let th = &mut self.threads[t];
        let Some(frame) = th.frames.pop() else {
            return Ok(());
        };
        let f = &module.functions[frame.func];
        let Some(caller) = th.frames.last_mut() else {
            th.state = State::Exited;
            return Ok(());
        };
        let caller_fn = &module.functions[caller.func];
        for (dst, p) in frame.rets.iter().zip(&f.returns) {
            let bytes: Vec<u8> = match p.binding {
                ParamBinding::Local(l) => {
                    let off = (frame.local_base + f.locals[l].offset) as usize;
                    th.local[off..off + p.size as usize].to_vec()
                }
                ParamBinding::Reg(r) => {
                    frame.regs[r.0 as usize].to_le_bytes()[..(p.size as usize).min(8)].to_vec()
                }
                ParamBinding::KernelBuffer => continue,
            };
            match dst {
                CallArg::Reg(r) => {
                    let mut w = [0u8; 8];
                    let n = bytes.len().min(8);
                    w[..n].copy_from_slice(&bytes[..n]);
                    caller.regs[r.0 as usize] = u64::from_le_bytes(w);
                }
                CallArg::Local(l) => {
                    let off = (caller.local_base + caller_fn.locals[*l].offset) as usize;
                    let n = bytes.len().min(caller_fn.locals[*l].size as usize);
                    th.local[off..off + n].copy_from_slice(&bytes[..n]);
                }
                CallArg::Imm(_) => {}
            }
        }
        th.local.truncate(frame.local_base as usize);
        caller.idx += 1;
        Ok(())
    }

    /// Address of a symbol in its own space (or generic).
    fn symbol_addr(&self, t: usize, sym: Symbol, generic: bool) -> u64 {
        let module = self.ctx.module;
        match sym {
            Symbol::Global(g) => {
                let gv = &module.globals[g];
                match gv.space {
                    Space::Global => self.ctx.inst.global_addr(g),
                    Space::Shared => {
                        let off = if gv.dynamic {
                            self.ctx.dyn_base
                        } else {
                            self.ctx.shared_offsets.get(&g).copied().unwrap_or(0)
                        };
                        off + if generic { SHARED_WINDOW } else { 0 }
                    }
                    Space::Const => gv.offset + if generic { CONST_WINDOW } else { 0 },
                    _ => 0,
                }
            }
            Symbol::Local(l) => {
                let f = self.threads[t].frames.last().expect("frame");
                let off = f.local_base + module.functions[f.func].locals[l].offset;
                off + if generic { LOCAL_WINDOW } else { 0 }
            }
            Symbol::KernelParam(i) => {
                let off = module.functions[self.ctx.kernel]
                    .params
                    .get(i as usize)
                    .map_or(0, |p| p.offset);
                off + if generic { PARAM_WINDOW } else { 0 }
            }
            Symbol::Function(f) => FUNC_WINDOW + 16 * u64::from(f.0),
        }
    }

    fn effective(&self, t: usize, a: &Address, space: Space) -> u64 {
        let base = match a.base {
            AddrBase::Reg(r) => self.val(t, Value::Reg(r)),
            AddrBase::Symbol(s) => self.symbol_addr(t, s, space == Space::Generic),
            AddrBase::None => 0,
        };
        base.wrapping_add(a.offset as u64)
    }

    /// Resolve a generic address to its space and offset.
    fn resolve(space: Space, addr: u64) -> (Space, u64) {
        if space != Space::Generic {
            return (space, addr);
        }
        for (w, s) in [
            (SHARED_WINDOW, Space::Shared),
            (LOCAL_WINDOW, Space::Local),
            (CONST_WINDOW, Space::Const),
            (PARAM_WINDOW, Space::Param),
        ] {
            if addr >= w && addr < w + WINDOW_SIZE {
                return (s, addr - w);
            }
        }
        (Space::Global, addr)
    }

    fn mem_fault(
        &self,
        t: usize,
        line: u32,
        what: &str,
        space: Space,
        len: u32,
        addr: u64,
        detail: String,
    ) -> ExecError {
        self.fault(
            t,
            line,
            FaultKind::Memory {
                access: format!("{space} {what} of {len} bytes"),
                addr,
                detail,
            },
        )
    }

    fn check_align(
        &self,
        t: usize,
        line: u32,
        what: &str,
        space: Space,
        addr: u64,
        align: u32,
    ) -> Res<()> {
        if align > 1 && !addr.is_multiple_of(u64::from(align)) {
            return Err(self.fault(
                t,
                line,
                FaultKind::Misaligned {
                    access: format!("{space} {what}"),
                    addr,
                    align,
                },
            ));
        }
        Ok(())
    }

    fn small_space(&self, t: usize, space: Space) -> (usize, usize) {
        // (length of the space's bytes, base offset for local)
        match space {
            Space::Shared => (self.shared.len(), 0),
            Space::Local => (self.threads[t].local.len(), 0),
            Space::Const => (self.ctx.inst.const_bank().len(), 0),
            Space::Param => (self.ctx.params.len(), 0),
            _ => (0, 0),
        }
    }

    fn load(&self, t: usize, line: u32, space: Space, addr: u64, len: u32) -> Res<u64> {
        let (sp, off) = Self::resolve(space, addr);
        if sp == Space::Global {
            return match self.ctx.map.find(off, u64::from(len)) {
                Ok(a) => Ok(a.read(off - a.base, len)),
                Err(e) => Err(self.mem_fault(t, line, "load", sp, len, addr, e.to_string())),
            };
        }
        let (size, _) = self.small_space(t, sp);
        let end = off.checked_add(u64::from(len));
        if end.is_none_or(|e| e > size as u64) {
            return Err(self.mem_fault(
                t,
                line,
                "load",
                sp,
                len,
                addr,
                format!(
                    "the {sp} space of this {} is {size} bytes",
                    if sp == Space::Local {
                        "thread"
                    } else {
                        "launch"
                    }
                ),
            ));
        }
        let o = off as usize;
        let bytes: &[u8] = match sp {
            Space::Shared => &self.shared[o..o + len as usize],
            Space::Local => &self.threads[t].local[o..o + len as usize],
            Space::Const => &self.ctx.inst.const_bank()[o..o + len as usize],
            _ => &self.ctx.params[o..o + len as usize],
        };
        let mut w = [0u8; 8];
        w[..len as usize].copy_from_slice(bytes);
        Ok(u64::from_le_bytes(w))
    }

    fn store(&mut self, t: usize, line: u32, space: Space, addr: u64, len: u32, v: u64) -> Res<()> {
        let (sp, off) = Self::resolve(space, addr);
        if sp == Space::Global {
            return match self.ctx.map.find(off, u64::from(len)) {
                Ok(a) => {
                    a.write(off - a.base, len, v);
                    Ok(())
                }
                Err(e) => Err(self.mem_fault(t, line, "store", sp, len, addr, e.to_string())),
            };
        }
        if matches!(sp, Space::Const | Space::Param) {
            return Err(self.mem_fault(
                t,
                line,
                "store",
                sp,
                len,
                addr,
                format!("the {sp} space is read-only"),
            ));
        }
        let (size, _) = self.small_space(t, sp);
        if off
            .checked_add(u64::from(len))
            .is_none_or(|e| e > size as u64)
        {
            return Err(self.mem_fault(
                t,
                line,
                "store",
                sp,
                len,
                addr,
                format!("the {sp} space is {size} bytes"),
            ));
        }
        let o = off as usize;
        let bytes = &v.to_le_bytes()[..len as usize];
        match sp {
            Space::Shared => self.shared[o..o + len as usize].copy_from_slice(bytes),
            _ => self.threads[t].local[o..o + len as usize].copy_from_slice(bytes),
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        t: usize,
        line: u32,
        space: Space,
        addr: u64,
        ty: Ty,
        op: AtomOp,
        a: u64,
        b: u64,
    ) -> Res<u64> {
        let len = ty.bytes();
        self.check_align(t, line, "atomic", space, addr, len)?;
        let (sp, off) = Self::resolve(space, addr);
        match sp {
            Space::Global => match self.ctx.map.find(off, u64::from(len)) {
                Ok(al) => Ok(al.rmw(off - al.base, len, |old| alu::atom_apply(op, ty, old, a, b))),
                Err(e) => Err(self.mem_fault(t, line, "atomic", sp, len, addr, e.to_string())),
            },
            Space::Shared => {
                // One OS thread runs the CTA: shared atomics need no locking.
                let old = self.load(t, line, sp, off, len)?;
                let new = alu::atom_apply(op, ty, old, a, b);
                self.store(t, line, sp, off, len, memory::mask(len) & new)?;
                Ok(old)
            }
            _ => Err(self.mem_fault(
                t,
                line,
                "atomic",
                sp,
                len,
                addr,
                "atomics need global or shared memory".into(),
            )),
        }
    }

    fn special(&self, t: usize, s: Special) -> u64 {
        let th = &self.threads[t];
        let c = &self.ctx.cfg;
        let lane = (t % WARP) as u32;
        let v: u64 = match s {
            Special::Tid(i) => th.tid[i as usize].into(),
            Special::Ntid(i) => c.block[i as usize].into(),
            Special::Ctaid(i) => self.ctaid[i as usize].into(),
            Special::Nctaid(i) => c.grid[i as usize].into(),
            Special::LaneId => lane.into(),
            Special::WarpId => (t / WARP) as u64,
            Special::NWarpId => 64,
            Special::SmId => self.smid.into(),
            Special::NSmId => self.ctx.nsm.into(),
            Special::GridId => 1,
            Special::LaneMaskEq => 1u64 << lane,
            Special::LaneMaskLe => zx((2u64 << lane) - 1, 32),
            Special::LaneMaskLt => (1u64 << lane) - 1,
            Special::LaneMaskGe => zx(!((1u64 << lane) - 1), 32),
            Special::LaneMaskGt => zx(!((2u64 << lane) - 1), 32),
            Special::Clock => zx(self.steps, 32),
            Special::Clock64 => self.steps,
            Special::GlobalTimer => self.ctx.start.elapsed().as_nanos() as u64,
            Special::DynamicSmemSize => self.ctx.cfg.dynamic_shared.into(),
            Special::TotalSmemSize => self.ctx.shared_total,
            Special::EnvReg(_) => 0,
        };
        v
    }

    /// The value of a call argument (registers, immediates, or the first
    /// 8 bytes of a `.param` variable of the frame).
    fn call_arg(&self, t: usize, a: &CallArg) -> u64 {
        match a {
            CallArg::Reg(r) => self.val(t, Value::Reg(*r)),
            CallArg::Imm(x) => *x,
            CallArg::Local(l) => {
                let th = &self.threads[t];
                let Some(f) = th.frames.last() else { return 0 };
                let loc = &self.ctx.module.functions[f.func].locals[*l];
                let off = (f.local_base + loc.offset) as usize;
                let n = loc.size.min(8) as usize;
                let mut w = [0u8; 8];
                if let Some(b) = th.local.get(off..off + n) {
                    w[..n].copy_from_slice(b);
                }
                u64::from_le_bytes(w)
            }
        }
    }

    /// A NUL-terminated string at a generic address (at most 4 KiB).
    fn c_string(&self, t: usize, line: u32, addr: u64) -> Res<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..4096u64 {
            let b = self.load(t, line, Space::Generic, addr.wrapping_add(i), 1)? as u8;
            if b == 0 {
                break;
            }
            out.push(b);
        }
        Ok(out)
    }

    fn builtin(
        &mut self,
        t: usize,
        line: u32,
        which: Builtin,
        args: &[CallArg],
        rets: &[CallArg],
    ) -> Res<()> {
        let a: Vec<u64> = args.iter().map(|x| self.call_arg(t, x)).collect();
        match which {
            Builtin::Vprintf => {
                let fmt = self.c_string(t, line, a[0])?;
                let mut fault = None;
                let (text, n) = crate::printf::format(
                    &fmt,
                    |off, size| match self.load(
                        t,
                        line,
                        Space::Generic,
                        a[1].wrapping_add(off),
                        size,
                    ) {
                        Ok(v) => Some(v),
                        Err(e) => {
                            fault.get_or_insert(e);
                            None
                        }
                    },
                    |p| {
                        self.c_string(t, line, p)
                            .map(|s| String::from_utf8_lossy(&s).into_owned())
                            .unwrap_or_else(|_| "(bad string)".into())
                    },
                );
                if let Some(e) = fault {
                    return Err(e);
                }
                match &self.ctx.printf {
                    Some(buf) => buf
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push_str(&text),
                    None => {
                        use std::io::Write;
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(text.as_bytes());
                        let _ = out.flush();
                    }
                }
                if let Some(r) = rets.first() {
                    self.write_call_result(t, r, u64::from(n));
                }
            }
            Builtin::BadFunctionPointer => {
                return Err(self.fault(t, line, bad_function_pointer(a[0])));
            }
            Builtin::AssertFail => {
                let msg = String::from_utf8_lossy(&self.c_string(t, line, a[0])?).into_owned();
                let file = String::from_utf8_lossy(&self.c_string(t, line, a[1])?).into_owned();
                let func = String::from_utf8_lossy(&self.c_string(t, line, a[3])?).into_owned();
                let m = format!(
                    "assertion `{msg}` failed at {file}:{} in `{func}`",
                    a[2] as u32
                );
                return Err(self.fault(t, line, FaultKind::Assert(m)));
            }
        }
        Ok(())
    }

    fn write_call_result(&mut self, t: usize, r: &CallArg, v: u64) {
        match r {
            CallArg::Reg(reg) => self.set(t, *reg, v),
            CallArg::Local(l) => {
                let module = self.ctx.module;
                let th = &mut self.threads[t];
                if let Some(f) = th.frames.last() {
                    let loc = &module.functions[f.func].locals[*l];
                    let off = (f.local_base + loc.offset) as usize;
                    let n = loc.size.min(8) as usize;
                    if let Some(dst) = th.local.get_mut(off..off + n) {
                        dst.copy_from_slice(&v.to_le_bytes()[..n]);
                    }
                }
            }
            CallArg::Imm(_) => {}
        }
    }

    /// Execute a non-collective, non-control instruction for one thread.
    fn exec(&mut self, t: usize, inst: &Inst) -> Res<()> {
        let line = inst.loc.line;
        let v = |this: &Self, x: Value| this.val(t, x);
        match &inst.kind {
            InstKind::Mov { dst, src, ty } => {
                let x = v(self, *src);
                let x = if *ty == Ty::Pred { x & 1 } else { x };
                self.set(t, *dst, x);
            }
            InstKind::AddrOf { dst, sym, space } => {
                let a = self.symbol_addr(t, *sym, *space == Space::Generic);
                self.set(t, *dst, a);
            }
            InstKind::Int { op, ty, dst, args } => {
                let mut a = [0u64; 4];
                for (i, x) in args.iter().enumerate().take(4) {
                    a[i] = v(self, *x);
                }
                let r = alu::int_op(*op, *ty, &a[..args.len()]);
                self.set(t, *dst, r);
            }
            InstKind::Carry {
                sub,
                ty,
                dst,
                a,
                b,
                carry_in,
                carry_out,
            } => {
                let bits = ty.bits();
                let (x, y) = (zx(v(self, *a), bits) as u128, zx(v(self, *b), bits) as u128);
                let cin = carry_in.map_or(0, |c| (v(self, Value::Reg(c)) & 1) as u128);
                let full = 1u128 << bits;
                let (r, cout) = if *sub {
                    // Borrow out: PTX's CC.CF after sub.cc is the borrow.
                    let r = x.wrapping_sub(y).wrapping_sub(cin);
                    (r & (full - 1), u64::from(x < y + cin))
                } else {
                    let r = x + y + cin;
                    (r & (full - 1), u64::from(r >= full))
                };
                self.set(t, *dst, r as u64);
                if let Some(c) = carry_out {
                    self.set(t, *c, cout);
                }
            }
            InstKind::Float {
                op,
                ty,
                dst,
                args,
                round,
                ftz,
                sat,
            } => {
                let mut a = [0u64; 3];
                for (i, x) in args.iter().enumerate().take(3) {
                    a[i] = v(self, *x);
                }
                let r = alu::float_op(*op, *ty, &a[..args.len()], *round, *ftz, *sat);
                self.set(t, *dst, r);
            }
            InstKind::Setp {
                cmp,
                ty,
                dst,
                dst2,
                a,
                b,
                combine,
                ftz,
            } => {
                let c = alu::compare(*cmp, *ty, v(self, *a), v(self, *b), *ftz);
                let (r1, r2) = match combine {
                    None => (c, !c),
                    Some((op, p, neg)) => {
                        let q = (v(self, *p) & 1 == 1) != *neg;
                        (alu::bool_op(*op, c, q), alu::bool_op(*op, !c, q))
                    }
                };
                self.set(t, *dst, u64::from(r1));
                if let Some(d2) = dst2 {
                    self.set(t, *d2, u64::from(r2));
                }
            }
            InstKind::Set {
                cmp,
                ty,
                dst_ty,
                dst,
                a,
                b,
                combine,
                ftz,
            } => {
                let mut c = alu::compare(*cmp, *ty, v(self, *a), v(self, *b), *ftz);
                if let Some((op, p, neg)) = combine {
                    let q = (v(self, *p) & 1 == 1) != *neg;
                    c = alu::bool_op(*op, c, q);
                }
                let r = match (*dst_ty, c) {
                    (Ty::F32, true) => u64::from(1.0f32.to_bits()),
                    (_, false) => 0,
                    (d, true) => zx(u64::MAX, d.bits()),
                };
                self.set(t, *dst, r);
            }
            InstKind::Selp { dst, a, b, c, .. } => {
                let r = if v(self, *c) & 1 == 1 {
                    v(self, *a)
                } else {
                    v(self, *b)
                };
                self.set(t, *dst, r);
            }
            InstKind::Slct {
                dst,
                a,
                b,
                c,
                cty,
                ftz,
                ..
            } => {
                let cv = v(self, *c);
                let ge = if *cty == Ty::F32 {
                    let f = f32::from_bits(cv as u32);
                    let f = if *ftz { warpfold_fp::flush_f32(f) } else { f };
                    f >= 0.0
                } else {
                    sx(cv, 32) >= 0
                };
                let r = if ge { v(self, *a) } else { v(self, *b) };
                self.set(t, *dst, r);
            }
            InstKind::PredOp { op, dst, a, b } => {
                let (x, y) = (v(self, *a) & 1 == 1, v(self, *b) & 1 == 1);
                let r = match op {
                    PredOp::And => x && y,
                    PredOp::Or => x || y,
                    PredOp::Xor => x ^ y,
                    PredOp::Not => !x,
                    PredOp::Mov => x,
                };
                self.set(t, *dst, u64::from(r));
            }
            InstKind::Testp { kind, ty, dst, a } => {
                let r = alu::testp(*kind, *ty, v(self, *a));
                self.set(t, *dst, u64::from(r));
            }
            InstKind::Cvt {
                dst_ty,
                src_ty,
                dst,
                src,
                round,
                ftz,
                sat,
            } => {
                let r = alu::cvt(*dst_ty, *src_ty, v(self, *src), *round, *ftz, *sat);
                self.set(t, *dst, r);
            }
            InstKind::IsSpace { space, dst, src } => {
                let (sp, _) = Self::resolve(Space::Generic, v(self, *src));
                self.set(t, *dst, u64::from(sp == *space));
            }
            InstKind::Cvta {
                to_generic,
                space,
                dst,
                src,
                bits,
            } => {
                let x = zx(v(self, *src), *bits);
                let window = match space {
                    Space::Shared => SHARED_WINDOW,
                    Space::Local => LOCAL_WINDOW,
                    Space::Const => CONST_WINDOW,
                    Space::Param => PARAM_WINDOW,
                    _ => 0,
                };
                let r = if *to_generic {
                    x.wrapping_add(window)
                } else if window != 0 && x >= window && x < window + WINDOW_SIZE {
                    x - window
                } else if window != 0 {
                    // Not an address of that space: a GPU gives garbage; keep
                    // it far outside every space so a use of it faults.
                    x | 0x8000_0000_0000_0000
                } else {
                    x
                };
                self.set(t, *dst, zx(r, *bits));
            }
            InstKind::Pack {
                dst,
                parts,
                part_bits,
                ..
            } => {
                let mut r = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    r |= zx(v(self, *p), *part_bits) << (i as u32 * part_bits);
                }
                self.set(t, *dst, r);
            }
            InstKind::Unpack {
                dsts,
                src,
                part_bits,
                ..
            } => {
                let x = v(self, *src);
                for (i, d) in dsts.iter().enumerate() {
                    if let Some(d) = d {
                        self.set(t, *d, zx(x >> (i as u32 * part_bits), *part_bits));
                    }
                }
            }
            InstKind::Ld {
                space,
                ty,
                dsts,
                addr,
                ..
            } => {
                let base = self.effective(t, addr, *space);
                let len = ty.bytes();
                let total = len * dsts.len() as u32;
                self.check_align(
                    t,
                    line,
                    "load",
                    *space,
                    base,
                    total.next_power_of_two().min(16),
                )?;
                for (i, d) in dsts.iter().enumerate() {
                    let x = self.load(
                        t,
                        line,
                        *space,
                        base.wrapping_add(u64::from(len) * i as u64),
                        len,
                    )?;
                    let x = if ty.is_signed() {
                        sx(x, ty.bits()) as u64
                    } else {
                        x
                    };
                    if let Some(d) = d {
                        self.set(t, *d, x);
                    }
                }
            }
            InstKind::St {
                space,
                ty,
                srcs,
                addr,
                ..
            } => {
                let base = self.effective(t, addr, *space);
                let len = ty.bytes();
                let total = len * srcs.len() as u32;
                self.check_align(
                    t,
                    line,
                    "store",
                    *space,
                    base,
                    total.next_power_of_two().min(16),
                )?;
                for (i, s) in srcs.iter().enumerate() {
                    let x = zx(v(self, *s), len * 8);
                    self.store(
                        t,
                        line,
                        *space,
                        base.wrapping_add(u64::from(len) * i as u64),
                        len,
                        x,
                    )?;
                }
            }
            InstKind::Atom {
                space,
                op,
                ty,
                dst,
                addr,
                a,
                b,
            } => {
                let at = self.effective(t, addr, *space);
                let (x, y) = (v(self, *a), b.map_or(0, |b| v(self, b)));
                let old = self.atomic(t, line, *space, at, *ty, *op, x, y)?;
                if let Some(d) = dst {
                    let old = if ty.is_signed() {
                        sx(old, ty.bits()) as u64
                    } else {
                        old
                    };
                    self.set(t, *d, old);
                }
            }
            InstKind::Fence | InstKind::Nop => {}
            InstKind::ReadSpecial { dst, sreg } => {
                let x = self.special(t, *sreg);
                self.set(t, *dst, x);
            }
            InstKind::Trap => return Err(self.fault(t, line, FaultKind::Trap)),
            InstKind::Builtin { which, args, rets } => self.builtin(t, line, *which, args, rets)?,
            InstKind::Shfl { .. }
            | InstKind::Vote { .. }
            | InstKind::Activemask { .. }
            | InstKind::Match { .. }
            | InstKind::Redux { .. }
            | InstKind::WarpSync { .. }
            | InstKind::Bar { .. }
            | InstKind::Call { .. }
            | InstKind::CallIndirect { .. } => unreachable!("handled by the warp scheduler"),
        }
        Ok(())
    }
}
