//! How each register's value varies across the lanes of a warp: the same
//! in every lane (uniform), lane 0's value plus the lane index times a
//! constant stride (affine: `%tid.x`-based indices and addresses), or
//! anything. Uniform and affine registers are kept as one scalar, lane 0's
//! value; memory accesses through an affine address whose stride is the
//! element size are one vector access with no run-time test.
//!
//! A register qualifies when it has a single unguarded definition that
//! dominates every use, from operands that qualify. Every lane that reads
//! it has then run that definition with the same operand values (they
//! never change once defined), so the formula holds for every reader, even
//! when groups of lanes run the definition at different times.
//!
//! Arithmetic wraps at the register's width, so sums, differences and
//! products with constants keep the affine form exactly. Widening (`cvt`,
//! `mul.wide`) keeps it only when no two lanes' values lie on different
//! sides of a multiple of 2^(bits-1), where sign or zero extension jumps
//! by 2^bits. That is known when lane 0's value is a multiple of a power of
//! two M with 32·stride ≤ M ≤ 2^(bits-1): the 32 values then stay inside
//! one aligned interval of size M. `align` tracks such an M (1: unknown).
//! `%tid.x` of lane 0 is a multiple of 32 in the block shapes the kernel
//! is specialised for, and `%ctaid.x * 256` a multiple of 256. Otherwise
//! (`y * width + x` with a run-time width) the widened value is affine
//! with at most one `jump` (of -2^bits) from some lane k on, found when
//! the value is computed and kept next to it: accesses test k == 32 (no
//! jump) with one scalar comparison instead of comparing 32 addresses.

use crate::prepare::Prepared;
use crate::uniform::{defs, uniform_operands, uses};
use warpfold_ir::*;

/// The value of lane i is lane 0's value + i * `stride`, plus `jump` if
/// i >= k (wrapping at the register's width); k (32 when there is no
/// jump) is known only at run time. Lane 0's value is a multiple of
/// `align`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    pub stride: i64,
    pub jump: i64,
    pub align: u64,
}

impl Lanes {
    pub fn is_uniform(self) -> bool {
        self.stride == 0 && self.jump == 0
    }

    fn uniform(align: u64) -> Lanes {
        Lanes::affine(0, align)
    }

    fn affine(stride: i64, align: u64) -> Lanes {
        Lanes {
            stride,
            jump: 0,
            align,
        }
    }
}

/// Where the lane of a register's jump comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JumpFrom {
    /// The widening of `src` (read at `bits`, with `stride` > 0): the lane
    /// follows from lane 0's value.
    Widen {
        src: Reg,
        bits: u32,
        signed: bool,
        stride: i64,
    },
    /// The same lane as register `src`'s (sums and products with
    /// constants keep it).
    Same(Reg),
}

/// The lane forms of a kernel's registers.
pub struct LaneForms {
    pub forms: Vec<Option<Lanes>>,
    /// For registers whose form has a jump.
    pub jumps: Vec<Option<JumpFrom>>,
}

/// The block shape a kernel is compiled for.
pub type Shape = [u32; 3];

/// The largest alignment tracked for a `bits`-wide value.
fn cap(bits: u32) -> u64 {
    1u64 << bits.min(62)
}

/// `x` wrapped to `bits` and sign-extended back.
fn wrap(x: i64, bits: u32) -> i64 {
    if bits >= 64 {
        x
    } else {
        (x << (64 - bits)) >> (64 - bits)
    }
}

fn low(x: u64, bits: u32) -> u64 {
    if bits >= 64 {
        x
    } else {
        x & ((1u64 << bits) - 1)
    }
}

/// An operand as the analysis sees it.
#[derive(Clone, Copy)]
enum Opnd {
    Imm(u64),
    Reg(Lanes),
}

impl Opnd {
    fn lanes(self, bits: u32) -> Lanes {
        match self {
            Opnd::Reg(l) => l,
            Opnd::Imm(x) => {
                let v = low(x, bits);
                let align = if v == 0 {
                    cap(bits)
                } else {
                    (1u64 << v.trailing_zeros()).min(cap(bits))
                };
                Lanes::uniform(align)
            }
        }
    }
}

/// A sum; two jumps (at lanes that may differ) make no form.
fn add(a: Lanes, b: Lanes, bits: u32) -> Option<Lanes> {
    if a.jump != 0 && b.jump != 0 {
        return None;
    }
    Some(Lanes {
        stride: wrap(a.stride.wrapping_add(b.stride), bits),
        jump: wrap(a.jump.wrapping_add(b.jump), bits),
        align: a.align.min(b.align),
    })
}

fn neg(a: Lanes, bits: u32) -> Lanes {
    Lanes {
        stride: wrap(a.stride.wrapping_neg(), bits),
        jump: wrap(a.jump.wrapping_neg(), bits),
        align: a.align,
    }
}

fn mul_const(a: Lanes, c: u64, bits: u32) -> Lanes {
    let c = low(c, bits);
    if c == 0 {
        return Lanes::uniform(cap(bits));
    }
    let scale = 1u64 << c.trailing_zeros().min(62);
    Lanes {
        stride: wrap(a.stride.wrapping_mul(c as i64), bits),
        jump: wrap(a.jump.wrapping_mul(c as i64), bits),
        align: a.align.saturating_mul(scale).min(cap(bits)),
    }
}

fn mul(a: Opnd, b: Opnd, bits: u32) -> Option<Lanes> {
    match (a, b) {
        (x, Opnd::Imm(c)) | (Opnd::Imm(c), x) => Some(mul_const(x.lanes(bits), c, bits)),
        (Opnd::Reg(x), Opnd::Reg(y)) if x.is_uniform() && y.is_uniform() => Some(Lanes::uniform(
            x.align.saturating_mul(y.align).min(cap(bits)),
        )),
        _ => None,
    }
}

/// Sign or zero extension from `from` to `to` bits (see the module
/// comment).
fn widen(a: Opnd, from: u32, to: u32, signed: bool) -> Option<Opnd> {
    match a {
        Opnd::Imm(x) => {
            let v = low(x, from);
            let v = if signed {
                wrap(v as i64, from) as u64
            } else {
                v
            };
            Some(Opnd::Imm(low(v, to)))
        }
        Opnd::Reg(l) if l.jump != 0 || l.stride < 0 => None,
        Opnd::Reg(l) => {
            let half = 1u64 << (from - 1).min(62);
            let align = l.align.min(cap(from));
            let stride = l.stride as u64;
            if stride == 0 || stride.saturating_mul(32) <= align.min(half) {
                return Some(Opnd::Reg(Lanes::affine(l.stride, align)));
            }
            // The 32 values cross the jump point at most once.
            (stride.saturating_mul(31) < half).then(|| {
                Opnd::Reg(Lanes {
                    stride: l.stride,
                    jump: wrap(1i64.wrapping_shl(from).wrapping_neg(), to),
                    align,
                })
            })
        }
    }
}

/// Reading an operand at `bits` from a register of `rb` bits: low bits,
/// or a zero extension (as the emitter reads it).
fn at_width(a: Opnd, rb: u32, bits: u32) -> Option<Opnd> {
    match a {
        Opnd::Imm(_) => Some(a),
        Opnd::Reg(l) if bits < rb => Some(Opnd::Reg(Lanes {
            stride: wrap(l.stride, bits),
            jump: wrap(l.jump, bits),
            align: l.align.min(cap(bits)),
        })),
        Opnd::Reg(_) if bits > rb => widen(a, rb, bits, false),
        _ => Some(a),
    }
}

/// Per register: its lane form, or `None` when lanes may hold anything.
pub fn lane_forms(m: &Module, p: &Prepared, shape: Shape) -> LaneForms {
    let f = &p.func;
    let n = f.regs.len();
    let reg_bits: Vec<u32> = f
        .regs
        .values()
        .map(|r| if r.ty == Ty::Pred { 1 } else { r.ty.bits() })
        .collect();
    let mut out: Vec<Option<Lanes>> = vec![None; n];
    let mut jumps: Vec<Option<JumpFrom>> = vec![None; n];
    let Some(&entry) = p.order.first() else {
        return LaneForms { forms: out, jumps };
    };
    let dom = Dominators::new(f, entry);
    // Where each register is defined (single unguarded definitions only).
    let mut def_at: Vec<Option<(BlockId, usize)>> = vec![None; n];
    let mut ndefs = vec![0u32; n];
    for (bid, b) in f.blocks.iter() {
        for (ix, i) in b.insts.iter().enumerate() {
            for d in defs(&i.kind) {
                ndefs[d.0 as usize] += 1;
                def_at[d.0 as usize] =
                    (i.guard.is_none() && dom.reachable(bid)).then_some((bid, ix));
            }
        }
    }
    let mut ok: Vec<bool> = (0..n)
        .map(|r| ndefs[r] == 1 && def_at[r].is_some())
        .collect();
    // Every use must be dominated by the definition.
    for (bid, b) in f.blocks.iter() {
        if !dom.reachable(bid) {
            continue;
        }
        let mut check = |r: Reg, ix: usize| {
            let r = r.0 as usize;
            if let Some((db, dix)) = def_at[r] {
                let fine = if db == bid {
                    dix < ix
                } else {
                    dom.dominates(db, bid)
                };
                if !fine {
                    ok[r] = false;
                }
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
    // Definitions in dominator order: operands are classified first.
    for bid in dom.rpo.iter().copied() {
        for i in &f.blocks[bid].insts {
            let ds = defs(&i.kind);
            if ds.is_empty() || !ds.iter().all(|d| ok[d.0 as usize]) {
                continue;
            }
            let get = |v: Value| -> Option<Opnd> {
                match v {
                    Value::Imm(x) => Some(Opnd::Imm(x)),
                    Value::Reg(r) => out[r.0 as usize].map(Opnd::Reg),
                }
            };
            let rb = |v: Value| match v {
                Value::Reg(r) => reg_bits[r.0 as usize],
                Value::Imm(_) => 64,
            };
            let mut form = if ds.len() == 1 {
                let db = reg_bits[ds[0].0 as usize];
                affine_form(&i.kind, shape, &get, &rb)
                    .filter(|&(_, bits)| bits == db)
                    .map(|(l, _)| l)
            } else {
                None
            };
            if form.is_some_and(|l| l.jump != 0) {
                let from = jump_from(&i.kind, &out, &reg_bits);
                if from.is_none() {
                    form = None;
                }
                jumps[ds[0].0 as usize] = from;
            }
            let form = form.or_else(|| {
                // Otherwise uniform when every operand is.
                let ops = uniform_operands(m, &i.kind)?;
                ops.iter()
                    .all(|v| get(*v).is_some_and(|o| o.lanes(64).is_uniform()))
                    .then_some(Lanes::uniform(1))
            });
            for d in ds {
                out[d.0 as usize] = form;
            }
        }
    }
    LaneForms { forms: out, jumps }
}

/// Where the jump of an instruction's result comes from (see `JumpFrom`).
fn jump_from(k: &InstKind, forms: &[Option<Lanes>], reg_bits: &[u32]) -> Option<JumpFrom> {
    let form = |v: &Value| match v {
        Value::Reg(r) => forms[r.0 as usize],
        Value::Imm(_) => None,
    };
    let widening = |v: &Value, bits: u32, to: u32, signed: bool| -> Option<JumpFrom> {
        let Value::Reg(r) = v else { return None };
        let l = form(v)?;
        let w = widen(
            at_width(Opnd::Reg(l), reg_bits[r.0 as usize], bits)?,
            bits,
            to,
            signed,
        )?;
        (w.lanes(to).jump != 0).then_some(JumpFrom::Widen {
            src: *r,
            bits,
            signed,
            stride: wrap(l.stride, bits),
        })
    };
    let same = |vs: &[Value]| {
        vs.iter().find_map(|v| match v {
            Value::Reg(r) if form(v).is_some_and(|l| l.jump != 0) => Some(JumpFrom::Same(*r)),
            _ => None,
        })
    };
    match k {
        InstKind::Int {
            op: IntOp::MulWide | IntOp::MadWide,
            ty,
            args,
            ..
        } => args
            .iter()
            .take(2)
            .find_map(|a| widening(a, ty.bits(), 2 * ty.bits(), ty.is_signed()))
            .or_else(|| same(args.get(2..)?)),
        InstKind::Cvt {
            src_ty,
            dst_ty,
            src,
            ..
        } if dst_ty.bits() > src_ty.bits() => {
            widening(src, src_ty.bits(), dst_ty.bits(), src_ty.is_signed())
        }
        InstKind::Int { args, .. } => same(args),
        InstKind::Mov { src, .. } | InstKind::Cvta { src, .. } | InstKind::Cvt { src, .. } => {
            same(std::slice::from_ref(src))
        }
        _ => None,
    }
}

/// The lane form of an instruction's single result and its width in bits,
/// for the instructions that can give affine values.
fn affine_form(
    k: &InstKind,
    shape: Shape,
    get: &dyn Fn(Value) -> Option<Opnd>,
    rb: &dyn Fn(Value) -> u32,
) -> Option<(Lanes, u32)> {
    // An operand read at `bits`.
    let arg = |v: Value, bits: u32| at_width(get(v)?, rb(v), bits);
    match k {
        InstKind::Mov { ty, src, .. } if *ty != Ty::Pred => {
            let b = ty.bits();
            Some((arg(*src, b)?.lanes(b), b))
        }
        InstKind::Int { op, ty, args, .. } => {
            let b = ty.bits();
            let a = |i: usize, bits: u32| arg(*args.get(i)?, bits);
            let l = match op {
                IntOp::Add => add(a(0, b)?.lanes(b), a(1, b)?.lanes(b), b)?,
                IntOp::Sub => add(a(0, b)?.lanes(b), neg(a(1, b)?.lanes(b), b), b)?,
                IntOp::Neg => neg(a(0, b)?.lanes(b), b),
                IntOp::MulLo => mul(a(0, b)?, a(1, b)?, b)?,
                IntOp::MadLo => add(mul(a(0, b)?, a(1, b)?, b)?, a(2, b)?.lanes(b), b)?,
                IntOp::Shl => match args.get(1)? {
                    Value::Imm(k) if low(*k, 32) >= u64::from(b) => Lanes::uniform(cap(b)),
                    Value::Imm(k) => mul_const(a(0, b)?.lanes(b), 1u64 << low(*k, 32), b),
                    _ => return None,
                },
                IntOp::MulWide | IntOp::MadWide => {
                    let s = ty.is_signed();
                    let x = widen(a(0, b)?, b, 2 * b, s)?;
                    let y = widen(a(1, b)?, b, 2 * b, s)?;
                    let p = mul(x, y, 2 * b)?;
                    let l = if *op == IntOp::MadWide {
                        add(p, a(2, 2 * b)?.lanes(2 * b), 2 * b)?
                    } else {
                        p
                    };
                    return Some((l, 2 * b));
                }
                _ => return None,
            };
            Some((l, b))
        }
        InstKind::Cvt {
            dst_ty,
            src_ty,
            src,
            sat: false,
            ..
        } if dst_ty.is_int() && src_ty.is_int() => {
            let (fb, tb) = (src_ty.bits(), dst_ty.bits());
            let x = arg(*src, fb)?;
            let y = if tb > fb {
                widen(x, fb, tb, src_ty.is_signed())?
            } else {
                at_width(x, fb, tb)?
            };
            Some((y.lanes(tb), tb))
        }
        InstKind::Cvta {
            space, src, bits, ..
        } if *space != Space::Local => {
            // Adds or subtracts the space's base: unknown alignment.
            let l = arg(*src, *bits)?.lanes(*bits);
            Some((Lanes { align: 1, ..l }, *bits))
        }
        InstKind::ReadSpecial { sreg, .. } => {
            let [x, y, _] = shape;
            let l = match sreg {
                Special::Tid(0) if x == 1 => Lanes::uniform(cap(32)),
                Special::Tid(0) if x % 32 == 0 || shape[1] * shape[2] == 1 => Lanes::affine(1, 32),
                Special::Tid(1) if y == 1 => Lanes::uniform(cap(32)),
                Special::Tid(1) if x % 32 == 0 => Lanes::uniform(1),
                Special::Tid(2) if shape[2] == 1 => Lanes::uniform(cap(32)),
                Special::Tid(2) if (x * y) % 32 == 0 => Lanes::uniform(1),
                Special::Ntid(c) => Opnd::Imm(u64::from(shape[*c as usize])).lanes(32),
                Special::LaneId => Lanes::affine(1, cap(32)),
                _ => return None,
            };
            Some((l, 32))
        }
        _ => None,
    }
}

/// Immediate dominators over the blocks reachable from the entry
/// (Cooper, Harvey and Kennedy's iterative algorithm).
struct Dominators {
    /// Reachable blocks in reverse postorder.
    rpo: Vec<BlockId>,
    /// Position in `rpo` (usize::MAX: unreachable).
    pos: Vec<usize>,
    /// Immediate dominator, as a position in `rpo`.
    idom: Vec<usize>,
}

fn succs(b: &Block) -> Vec<BlockId> {
    match &b.term {
        Some(Terminator::Jump(t)) => vec![*t],
        Some(Terminator::Branch { then, els, .. }) => vec![*then, *els],
        _ => vec![],
    }
}

impl Dominators {
    fn new(f: &Function, entry: BlockId) -> Self {
        let nb = f.blocks.len();
        // Iterative depth-first search for the postorder.
        let mut seen = vec![false; nb];
        let mut post = Vec::new();
        let mut stack = vec![(entry, 0usize)];
        seen[entry.0 as usize] = true;
        while let Some((b, i)) = stack.pop() {
            let s = succs(&f.blocks[b]);
            if i < s.len() {
                stack.push((b, i + 1));
                let t = s[i];
                if !seen[t.0 as usize] {
                    seen[t.0 as usize] = true;
                    stack.push((t, 0));
                }
            } else {
                post.push(b);
            }
        }
        let rpo: Vec<BlockId> = post.into_iter().rev().collect();
        let mut pos = vec![usize::MAX; nb];
        for (i, b) in rpo.iter().enumerate() {
            pos[b.0 as usize] = i;
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); rpo.len()];
        for (i, b) in rpo.iter().enumerate() {
            for s in succs(&f.blocks[*b]) {
                preds[pos[s.0 as usize]].push(i);
            }
        }
        let mut idom = vec![usize::MAX; rpo.len()];
        if !rpo.is_empty() {
            idom[0] = 0;
        }
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while a > b {
                    a = idom[a];
                }
                while b > a {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..rpo.len() {
                let mut new = usize::MAX;
                for &q in &preds[i] {
                    if idom[q] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        q
                    } else {
                        intersect(&idom, q, new)
                    };
                }
                if new != usize::MAX && idom[i] != new {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        Dominators { rpo, pos, idom }
    }

    fn reachable(&self, b: BlockId) -> bool {
        self.pos[b.0 as usize] != usize::MAX
    }

    /// Whether `a` dominates `b` (both reachable).
    fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, mut b) = (self.pos[a.0 as usize], self.pos[b.0 as usize]);
        loop {
            if a == b {
                return true;
            }
            if b == 0 || b < a {
                return false;
            }
            b = self.idom[b];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(o: Option<Opnd>) -> Option<Lanes> {
        o.map(|o| o.lanes(64))
    }

    #[test]
    fn widening_is_plain_only_for_aligned_lanes() {
        let tid = Opnd::Reg(Lanes::affine(1, 32));
        assert_eq!(form(widen(tid, 32, 64, true)), Some(Lanes::affine(1, 32)));
        // Scaling scales the alignment too: still one aligned interval.
        let scaled = Opnd::Reg(mul_const(tid.lanes(32), 4, 32));
        assert_eq!(
            form(widen(scaled, 32, 64, true)),
            Some(Lanes::affine(4, 128))
        );
        // Stride 4 over 32 lanes spans 128: lane 0 at a multiple of 32
        // may straddle 2^31, so the value may jump by -2^32.
        let wide = Opnd::Reg(Lanes::affine(4, 32));
        let w = form(widen(wide, 32, 64, true)).unwrap();
        assert_eq!((w.stride, w.jump), (4, -(1i64 << 32)));
        let h = form(widen(Opnd::Reg(Lanes::affine(1, 1)), 16, 32, false)).unwrap();
        assert_eq!((h.stride, h.jump), (1, -(1i64 << 16)));
        // Falling values and jumps of jumps make no form.
        assert!(widen(Opnd::Reg(Lanes::affine(-1, 1 << 20)), 32, 64, true).is_none());
        assert!(widen(Opnd::Reg(h), 32, 64, true).is_none());
        // Strides so large that 32 lanes may cross twice.
        assert!(widen(Opnd::Reg(Lanes::affine(1 << 27, 1)), 32, 64, true).is_none());
    }

    #[test]
    fn arithmetic_wraps_at_the_width() {
        let l = Lanes::affine(1 << 30, 1);
        assert_eq!(mul_const(l, 4, 32).stride, 0);
        assert_eq!(add(l, l, 32).unwrap().stride, i64::from(i32::MIN));
        // Truncating a widened value drops its jump.
        let j = Lanes {
            stride: 4,
            jump: -(1i64 << 32),
            align: 1,
        };
        let t = at_width(Opnd::Reg(j), 64, 32).unwrap().lanes(32);
        assert_eq!(t, Lanes::affine(4, 1));
        assert!(add(j, j, 64).is_none());
    }
}
