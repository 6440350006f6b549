//! Several CTAs in one warp. A block of n < 32 threads (n a power of two)
//! would leave 32 - n lanes of every vector idle; instead P = 32 / n CTAs
//! that follow each other along x share one warp. The kernel is rewritten
//! to run as CTAs of 32 threads (the "warp CTA" of P real ones): vector lane
//! v is thread v mod n of real CTA `P * %ctaid.x + v / n`, so `%tid`,
//! `%ctaid.x`, `%ntid` and `%laneid` become arithmetic on the warp CTA's
//! `%tid.x`, which the lane-form analysis follows (a real CTA's
//! `%ctaid.x * n + %tid.x` is again one unit-stride index across the
//! vector). The launcher runs the warp CTAs, with the missing real CTAs of
//! the last one as dead lanes, and gives `%nctaid` the real grid.
//!
//! Each real CTA gets its own shared memory, one stride apart: wherever
//! the kernel takes a `.shared` variable's address, the lane's CTA times
//! the stride is added.
//!
//! Only kernels where every real CTA's behaviour is unchanged qualify: no
//! dynamic shared memory (its size is the launch's), plain barriers only
//! and only where every live lane arrives together (else the real CTAs
//! could wait at different ones), no votes, ballots, matches, reductions
//! or lane masks (their results span the warp). Shuffles and
//! `bar.warp.sync` qualify when their member mask names every thread of
//! the real CTA and their source lane provably stays inside it; `compile`
//! also requires them in blocks all live lanes run together, so the real
//! CTAs never wait for each other.

use crate::lanes::Shape;
use crate::prepare::Unsupported;
use warpfold_ir::*;

/// Real CTAs per warp for blocks of `shape`, if packing can apply at all.
pub fn per_warp(shape: Shape) -> Option<u32> {
    let n = shape.iter().try_fold(1u32, |a, &d| a.checked_mul(d))?;
    (n > 0 && n < 32 && 32 % n == 0).then(|| 32 / n)
}

/// Bytes between the shared memories of the real CTAs in one warp: the
/// static size, 16-byte aligned (packed kernels have no dynamic part).
pub fn share(layout: &warpfold_ir::shared::SharedLayout) -> u64 {
    layout.dynamic_base().max(16)
}

/// The block shape a packed kernel's code runs: one warp.
pub const WARP_CTA: Shape = [32, 1, 1];

/// Rewrite `f` (a kernel with its calls inlined) to run warp CTAs of real
/// blocks of `shape`, or say why its behaviour would change. Each real
/// CTA's shared memory is `stride` bytes after the previous one's: the
/// address of every `.shared` variable gets the lane's CTA times `stride`
/// added where it is taken.
pub fn rewrite(m: &Module, f: &mut Function, shape: Shape, stride: u64) -> Result<(), Unsupported> {
    let n = shape.iter().product::<u32>();
    let p = per_warp(shape).ok_or_else(|| no("blocks of 32 threads or more"))?;
    let log = |x: u32| x.trailing_zeros();
    // Lane bits that select the real CTA.
    let group = 0x1f & !(n - 1);
    let known = crate::uniform::constants(f);
    let konst = |v: &Value| match v {
        Value::Imm(x) => Some(*x),
        Value::Reg(r) => known.get(r).copied(),
    };
    let bids: Vec<BlockId> = f.blocks.keys().collect();
    for b in bids {
        let old = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(old.len());
        for mut inst in old {
            let loc = inst.loc;
            let line = loc.line;
            check_space(m, &inst.kind, line)?;
            match &mut inst.kind {
                InstKind::ReadSpecial { dst, sreg } => {
                    let dst = *dst;
                    let rewritten = matches!(
                        sreg,
                        Special::Tid(_) | Special::Ntid(_) | Special::LaneId | Special::Ctaid(0)
                    );
                    if let Some(why) = rewritten.then(|| not_32_bits(f, dst, line)).flatten() {
                        return Err(no(&why));
                    }
                    let mut e = Emit {
                        f: &mut *f,
                        out: &mut out,
                        loc,
                        guard: inst.guard,
                    };
                    match *sreg {
                        Special::Tid(c) => {
                            let t = e.lane_in_cta(n);
                            let [x, y, _] = shape;
                            let v = match c {
                                0 => e.int(IntOp::And, t, Value::Imm(u64::from(x - 1))),
                                1 => {
                                    let s = e.int(IntOp::Shr, t, Value::Imm(u64::from(log(x))));
                                    e.int(IntOp::And, s, Value::Imm(u64::from(y - 1)))
                                }
                                _ => e.int(IntOp::Shr, t, Value::Imm(u64::from(log(x * y)))),
                            };
                            e.mov(dst, v);
                        }
                        Special::Ntid(c) => {
                            e.mov(dst, Value::Imm(u64::from(shape[usize::from(c.min(2))])))
                        }
                        Special::LaneId => {
                            let t = e.lane_in_cta(n);
                            e.mov(dst, t);
                        }
                        Special::Ctaid(0) => {
                            // The warp CTA's index times P, plus the lane's
                            // CTA within the warp.
                            let w = e.special(Special::Ctaid(0));
                            let first = e.int(IntOp::MulLo, w, Value::Imm(u64::from(p)));
                            let v = e.special(Special::Tid(0));
                            let k = e.int(IntOp::Shr, v, Value::Imm(u64::from(log(n))));
                            let c = e.int(IntOp::Add, first, k);
                            e.mov(dst, c);
                        }
                        Special::LaneMaskEq
                        | Special::LaneMaskLe
                        | Special::LaneMaskLt
                        | Special::LaneMaskGe
                        | Special::LaneMaskGt => {
                            return Err(no(&format!("lane masks (PTX line {line})")))
                        }
                        _ => out.push(inst),
                    }
                    continue;
                }
                InstKind::Shfl {
                    mode, b, c, mask, ..
                } => {
                    full_mask(mask, konst(mask), n, line)?;
                    let Some(cv) = konst(c) else {
                        return Err(no(&format!(
                            "a shuffle with a run-time width (PTX line {line})"
                        )));
                    };
                    let segmask = ((cv >> 8) & 0x1f) as u32;
                    let clamp = (cv & 0x1f) as u32;
                    let small_b = konst(b).is_some_and(|bv| (bv as u32 & 0x1f & group) == 0);
                    if segmask & group == group && (*mode != ShflMode::Bfly || small_b) {
                        // Segments no wider than a real CTA: the source
                        // lane is in the lane's own CTA (a butterfly also
                        // needs its offset inside the CTA: XOR with a CTA
                        // bit would cross into the next).
                    } else if clamp == 0x1f && small_b && *mode == ShflMode::Bfly {
                        // Whole-warp butterfly by less than n: stays inside.
                    } else if clamp == 0x1f && small_b && *mode == ShflMode::Idx {
                        // Whole-warp index below n: the same lane of the
                        // lane's own CTA, as segments of n lanes.
                        *c = Value::Imm(cv | u64::from(group << 8));
                    } else {
                        return Err(no(&format!(
                            "a shuffle whose source lane may leave a block of {n} threads (PTX line {line})"
                        )));
                    }
                }
                InstKind::WarpSync { mask } => full_mask(mask, konst(mask), n, line)?,
                // Plain barriers only, and (checked by `compile`) where every
                // live lane arrives together: the warp's real CTAs then
                // all wait at the same barrier, each for all its threads.
                InstKind::Bar {
                    kind: BarKind::Sync,
                    count: None,
                    ..
                } => {}
                InstKind::Bar { .. } => {
                    return Err(no(&format!(
                        "bar.red, bar.arrive or counted barriers (PTX line {line})"
                    )))
                }
                InstKind::AddrOf { dst, sym, .. } if shared_sym(m, sym) => {
                    // Take the address into a temporary; the register gets
                    // it plus the lane's CTA's share.
                    let dst = *dst;
                    let ty = f.regs[dst].ty;
                    let t = temp(f, ty);
                    let guard = inst.guard.take();
                    if let InstKind::AddrOf { dst, .. } = &mut inst.kind {
                        *dst = t;
                    }
                    out.push(inst);
                    let mut e = Emit {
                        f: &mut *f,
                        out: &mut out,
                        loc,
                        guard,
                    };
                    let off = e.share_offset(n, stride, ty.bits());
                    e.add_to(dst, ty, Value::Reg(t), off);
                    continue;
                }
                InstKind::Ld { addr, space, .. }
                | InstKind::St { addr, space, .. }
                | InstKind::Atom { addr, space, .. }
                    if matches!(&addr.base, AddrBase::Symbol(s) if shared_sym(m, s)) =>
                {
                    // `[var+off]`: through a register holding this CTA's
                    // address of `var` (in the access's space).
                    let AddrBase::Symbol(sym) = addr.base else {
                        unreachable!()
                    };
                    let (aspace, ty) = match *space {
                        Space::Shared => (Space::Shared, Ty::U32),
                        Space::Generic => (Space::Generic, Ty::U64),
                        _ => {
                            return Err(no(&format!(
                                "a shared variable accessed in another space (PTX line {line})"
                            )))
                        }
                    };
                    let (t, r) = (temp(f, ty), temp(f, ty));
                    addr.base = AddrBase::Reg(r);
                    let mut e = Emit {
                        f: &mut *f,
                        out: &mut out,
                        loc,
                        guard: None,
                    };
                    e.push(
                        InstKind::AddrOf {
                            dst: t,
                            sym,
                            space: aspace,
                        },
                        None,
                    );
                    let off = e.share_offset(n, stride, ty.bits());
                    e.add_to(r, ty, Value::Reg(t), off);
                }
                // Host calls of packed CTAs would interleave (printf order,
                // which fault comes first) where the interpreter runs one
                // CTA after another.
                InstKind::Builtin { .. } | InstKind::Trap => {
                    return Err(no(&format!("printf, assert or trap (PTX line {line})")))
                }
                InstKind::Vote { .. }
                | InstKind::Match { .. }
                | InstKind::Redux { .. }
                | InstKind::Activemask { .. } => {
                    return Err(no(&format!(
                        "votes, ballots, matches and warp reductions (PTX line {line})"
                    )))
                }
                _ => {}
            }
            out.push(inst);
        }
        f.blocks[b].insts = out;
    }
    Ok(())
}

fn no(why: &str) -> Unsupported {
    Unsupported(format!("packing CTAs into a warp: {why}"))
}

/// Why a special register read into `dst` cannot be rewritten, if it
/// cannot: the rewrites compute 32-bit values.
pub(crate) fn not_32_bits(f: &Function, dst: Reg, line: u32) -> Option<String> {
    let bits = f.regs[dst].ty.bits();
    (bits != 32)
        .then(|| format!("a special register read into a {bits}-bit register (PTX line {line})"))
}

/// A member mask naming every thread of a real CTA becomes the whole warp
/// (every real CTA in it).
fn full_mask(mask: &mut Value, value: Option<u64>, n: u32, line: u32) -> Result<(), Unsupported> {
    let all = crate::emit::low_bits(n);
    match value {
        Some(v) if (v as u32) & all == all => {
            *mask = Value::Imm(u64::from(u32::MAX));
            Ok(())
        }
        _ => Err(no(&format!(
            "a member mask that is not every thread of the block (PTX line {line})"
        ))),
    }
}

/// Whether a symbol is a `.shared` variable.
pub(crate) fn shared_sym(m: &Module, s: &Symbol) -> bool {
    matches!(s, Symbol::Global(g) if m.globals.get(*g).is_some_and(|g| g.space == Space::Shared))
}

/// Shared memory the rewrite cannot give each real CTA its own copy of:
/// dynamic shared memory (its size is the launch's), absolute shared
/// addresses and `isspacep.shared`.
fn check_space(m: &Module, k: &InstKind, line: u32) -> Result<(), Unsupported> {
    let dynamic = |s: &Symbol| matches!(s, Symbol::Global(g) if m.globals.get(*g).is_some_and(|g| g.space == Space::Shared && g.dynamic));
    let bad = match k {
        InstKind::AddrOf { sym, .. } => dynamic(sym),
        // The shared window of a packed CTA lies past the per-CTA size the
        // test uses.
        InstKind::IsSpace { .. } => true,
        InstKind::Ld { space, addr, .. }
        | InstKind::St { space, addr, .. }
        | InstKind::Atom { space, addr, .. } => match &addr.base {
            AddrBase::Symbol(s) => dynamic(s),
            AddrBase::None => *space == Space::Shared,
            AddrBase::Reg(_) => false,
        },
        InstKind::ReadSpecial {
            sreg: Special::DynamicSmemSize,
            ..
        } => true,
        _ => false,
    };
    if bad {
        return Err(no(&format!(
            "dynamic shared memory or absolute shared addresses (PTX line {line})"
        )));
    }
    Ok(())
}

/// A new register for the rewrite's temporaries.
fn temp(f: &mut Function, ty: Ty) -> Reg {
    let name = format!("%wf_pack{}", f.regs.len());
    f.regs.push(RegInfo { name, ty })
}

/// Appends the instructions that replace one special register read (here
/// and in `merge`).
pub(crate) struct Emit<'a> {
    pub(crate) f: &'a mut Function,
    pub(crate) out: &'a mut Vec<Inst>,
    pub(crate) loc: SrcLoc,
    pub(crate) guard: Option<(Reg, bool)>,
}

impl Emit<'_> {
    fn reg(&mut self) -> Reg {
        temp(self.f, Ty::U32)
    }

    /// Temporaries are written unguarded (each has this one definition);
    /// only the final move into the read's register keeps its guard.
    fn push(&mut self, kind: InstKind, guard: Option<(Reg, bool)>) {
        self.out.push(Inst {
            kind,
            guard,
            loc: self.loc,
        });
    }

    pub(crate) fn special(&mut self, sreg: Special) -> Value {
        let dst = self.reg();
        self.push(InstKind::ReadSpecial { dst, sreg }, None);
        Value::Reg(dst)
    }

    pub(crate) fn int(&mut self, op: IntOp, a: Value, b: Value) -> Value {
        let dst = self.reg();
        self.push(
            InstKind::Int {
                op,
                ty: Ty::U32,
                dst,
                args: vec![a, b],
            },
            None,
        );
        Value::Reg(dst)
    }

    /// The thread's index in its real CTA: the warp CTA's `%tid.x` mod n.
    fn lane_in_cta(&mut self, n: u32) -> Value {
        let v = self.special(Special::Tid(0));
        self.int(IntOp::And, v, Value::Imm(u64::from(n - 1)))
    }

    /// The lane's real CTA times `stride`, at `bits`.
    fn share_offset(&mut self, n: u32, stride: u64, bits: u32) -> Value {
        let v = self.special(Special::Tid(0));
        let k = self.int(IntOp::Shr, v, Value::Imm(u64::from(n.trailing_zeros())));
        let off = self.int(IntOp::MulLo, k, Value::Imm(stride));
        if bits == 32 {
            return off;
        }
        let wide = temp(self.f, Ty::U64);
        self.push(
            InstKind::Cvt {
                dst_ty: Ty::U64,
                src_ty: Ty::U32,
                dst: wide,
                src: off,
                round: None,
                ftz: false,
                sat: false,
            },
            None,
        );
        Value::Reg(wide)
    }

    /// `dst = a + b` at `ty`'s width, under the replaced instruction's guard.
    fn add_to(&mut self, dst: Reg, ty: Ty, a: Value, b: Value) {
        let g = self.guard;
        let ty = if ty.bits() == 64 { Ty::U64 } else { Ty::U32 };
        self.push(
            InstKind::Int {
                op: IntOp::Add,
                ty,
                dst,
                args: vec![a, b],
            },
            g,
        );
    }

    pub(crate) fn mov(&mut self, dst: Reg, src: Value) {
        let g = self.guard;
        self.push(
            InstKind::Mov {
                ty: Ty::U32,
                dst,
                src,
            },
            g,
        );
    }
}
