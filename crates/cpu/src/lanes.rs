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
//! is specialised for, and `%ctaid.x * 256` a multiple of 256.

use crate::prepare::Prepared;
use crate::uniform::{defs, uniform_operands, uses};
use warpfold_ir::*;

/// The value of lane i is lane 0's value + i * `stride` (wrapping at the
/// register's width); lane 0's value is a multiple of `align`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    pub stride: i64,
    pub align: u64,
}

impl Lanes {
    pub fn is_uniform(self) -> bool {
        self.stride == 0
    }

    fn uniform(align: u64) -> Lanes {
        Lanes { stride: 0, align }
    }
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

fn add(a: Lanes, b: Lanes, bits: u32) -> Lanes {
    Lanes {
        stride: wrap(a.stride.wrapping_add(b.stride), bits),
        align: a.align.min(b.align),
    }
}

fn neg(a: Lanes, bits: u32) -> Lanes {
    Lanes {
        stride: wrap(a.stride.wrapping_neg(), bits),
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

/// Sign or zero extension from `from` to `to` bits (either keeps the
/// form under the same condition: see the module comment).
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
        Opnd::Reg(l) => {
            let half = 1u64 << (from - 1).min(62);
            let align = l.align.min(cap(from));
            let fits = l.stride == 0
                || (l.stride > 0 && (l.stride as u64).saturating_mul(32) <= align.min(half));
            fits.then_some(Opnd::Reg(Lanes {
                stride: l.stride,
                align,
            }))
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
            align: l.align.min(cap(bits)),
        })),
        Opnd::Reg(_) if bits > rb => widen(a, rb, bits, false),
        _ => Some(a),
    }
}

/// Per register: its lane form, or `None` when lanes may hold anything.
pub fn lane_forms(m: &Module, p: &Prepared, shape: Shape) -> Vec<Option<Lanes>> {
    let f = &p.func;
    let n = f.regs.len();
    let reg_bits: Vec<u32> = f
        .regs
        .values()
        .map(|r| if r.ty == Ty::Pred { 1 } else { r.ty.bits() })
        .collect();
    let mut out: Vec<Option<Lanes>> = vec![None; n];
    let Some(&entry) = p.order.first() else {
        return out;
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
            let form = if ds.len() == 1 {
                let db = reg_bits[ds[0].0 as usize];
                affine_form(&i.kind, shape, &get, &rb)
                    .filter(|&(_, bits)| bits == db)
                    .map(|(l, _)| l)
            } else {
                None
            };
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
    out
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
                IntOp::Add => add(a(0, b)?.lanes(b), a(1, b)?.lanes(b), b),
                IntOp::Sub => add(a(0, b)?.lanes(b), neg(a(1, b)?.lanes(b), b), b),
                IntOp::Neg => neg(a(0, b)?.lanes(b), b),
                IntOp::MulLo => mul(a(0, b)?, a(1, b)?, b)?,
                IntOp::MadLo => add(mul(a(0, b)?, a(1, b)?, b)?, a(2, b)?.lanes(b), b),
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
                        add(p, a(2, 2 * b)?.lanes(2 * b), 2 * b)
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
            Some((
                Lanes {
                    stride: l.stride,
                    align: 1,
                },
                *bits,
            ))
        }
        InstKind::ReadSpecial { sreg, .. } => {
            let [x, y, _] = shape;
            let l = match sreg {
                Special::Tid(0) if x == 1 => Lanes::uniform(cap(32)),
                Special::Tid(0) if x % 32 == 0 || shape[1] * shape[2] == 1 => Lanes {
                    stride: 1,
                    align: 32,
                },
                Special::Tid(1) if y == 1 => Lanes::uniform(cap(32)),
                Special::Tid(1) if x % 32 == 0 => Lanes::uniform(1),
                Special::Tid(2) if shape[2] == 1 => Lanes::uniform(cap(32)),
                Special::Tid(2) if (x * y) % 32 == 0 => Lanes::uniform(1),
                Special::Ntid(c) => Opnd::Imm(u64::from(shape[*c as usize])).lanes(32),
                Special::LaneId => Lanes {
                    stride: 1,
                    align: cap(32),
                },
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

    #[test]
    fn widening_needs_aligned_lanes() {
        let tid = Opnd::Reg(Lanes {
            stride: 1,
            align: 32,
        });
        assert!(widen(tid, 32, 64, true).is_some());
        // Scaling scales the alignment too: still one aligned interval.
        let scaled = Opnd::Reg(mul_const(tid.lanes(32), 4, 32));
        assert!(widen(scaled, 32, 64, true).is_some());
        // Stride 4 over 32 lanes spans 128: lane 0 at a multiple of 32
        // may straddle 2^31.
        let wide = Opnd::Reg(Lanes {
            stride: 4,
            align: 32,
        });
        assert!(widen(wide, 32, 64, true).is_none());
        let unknown = Opnd::Reg(Lanes {
            stride: 1,
            align: 1,
        });
        assert!(widen(unknown, 32, 64, false).is_none());
        let down = Opnd::Reg(Lanes {
            stride: -1,
            align: 1 << 20,
        });
        assert!(widen(down, 32, 64, true).is_none());
    }

    #[test]
    fn arithmetic_wraps_at_the_width() {
        let l = Lanes {
            stride: 1 << 30,
            align: 1,
        };
        assert_eq!(mul_const(l, 4, 32).stride, 0);
        assert_eq!(add(l, l, 32).stride, i64::from(i32::MIN));
    }
}
