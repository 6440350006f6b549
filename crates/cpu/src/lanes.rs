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
//!
//! Code for narrower warps (W = 8 or 16 lanes, an aligned slice of the
//! GPU's warp) uses the same forms: lane offsets do not depend on which
//! slice holds lane 0, and checks over 32 lanes cover W of them. Only what
//! lane 0's own value is (a multiple of W for `%tid.x`, not of 32) and
//! rows wider than a warp depend on W: `lane_forms` takes the width.

use crate::dom::Dominators;
use crate::prepare::Prepared;
use crate::uniform::{defs, partial_def, uniform_operands, uses, Liveness};
use warpfold_ir::*;

/// The value of lane i is lane 0's value + i * `stride` + (i / `width`) *
/// `extra`, plus `jump` if i >= k (wrapping at the register's width); k
/// (32 when there is no jump) is known only at run time. Lane 0's value is
/// a multiple of `align`. `width` < 32 describes blocks narrower than a
/// warp (16x16: a warp holds two rows of 16 threads), where `%tid.x` goes
/// 0..15 twice (`extra` = -16) and `%tid.y` steps once between the rows;
/// a form with `extra` = 0 is the same in every width (kept as 32).
/// Every lane's value, read unsigned at the register's width, is at most
/// `max` (`UNBOUNDED`: not known), which tells when signed values are
/// never negative (`gid / 16` then shifts like an unsigned value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    pub stride: i64,
    pub extra: i64,
    pub width: u32,
    pub jump: i64,
    pub align: u64,
    pub max: u64,
}

/// No bound on a value (see `Lanes::max`).
pub const UNBOUNDED: u64 = u64::MAX;

/// `v` as a bound on `bits`-wide values: itself if it fits, else none.
fn bound(v: Option<u64>, bits: u32) -> u64 {
    match v {
        Some(v) if bits >= 64 || v < (1u64 << bits) => v,
        _ => UNBOUNDED,
    }
}

/// Whether every value below or at `max` is non-negative as a signed
/// `bits`-wide number.
fn non_negative(max: u64, bits: u32) -> bool {
    (1..=64).contains(&bits) && max < (1u64 << (bits - 1).min(63))
}

impl Lanes {
    pub fn is_uniform(self) -> bool {
        self.stride == 0 && self.jump == 0 && self.extra == 0
    }

    /// Lane i's value minus lane 0's (ignoring the jump).
    pub fn offset(self, i: u32) -> i64 {
        i64::from(i)
            .wrapping_mul(self.stride)
            .wrapping_add(i64::from(i / self.width).wrapping_mul(self.extra))
    }

    /// Whether the offset of each of a warp's first `lanes` lanes lies in
    /// [0, m): with lane 0's value a multiple of m, all values then share
    /// one aligned block of size m.
    pub fn within(self, m: u64, lanes: u32) -> bool {
        (0..lanes.min(32)).all(|i| {
            let o = i128::from(i) * i128::from(self.stride)
                + i128::from(i / self.width) * i128::from(self.extra);
            o >= 0 && o < i128::from(m)
        })
    }

    pub fn uniform(align: u64) -> Lanes {
        Lanes::affine(0, align)
    }

    fn affine(stride: i64, align: u64) -> Lanes {
        Lanes {
            stride,
            extra: 0,
            width: 32,
            jump: 0,
            align,
            max: UNBOUNDED,
        }
    }

    fn at_most(self, max: u64) -> Lanes {
        Lanes { max, ..self }
    }

    /// With `extra` and `width` made canonical.
    fn norm(self, bits: u32) -> Lanes {
        let extra = wrap(self.extra, bits);
        Lanes {
            stride: wrap(self.stride, bits),
            extra,
            width: if extra == 0 { 32 } else { self.width },
            jump: wrap(self.jump, bits),
            align: self.align,
            max: self.max,
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
    /// Per block (by index): every live lane runs it together (see
    /// `Cfg::convergent`).
    pub convergent: Vec<bool>,
    /// Per block: a yield on its way back round a loop must hand the turn
    /// to the earliest lanes, not the latest (see `Cfg::meets`).
    pub earliest_after_yield: Vec<bool>,
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
                Lanes::uniform(align).at_most(v)
            }
        }
    }
}

/// A sum; two jumps (at lanes that may differ), or a jump in a form with
/// rows, make no form.
fn add(a: Lanes, b: Lanes, bits: u32) -> Option<Lanes> {
    if a.jump != 0 && b.jump != 0 || a.extra != 0 && b.extra != 0 && a.width != b.width {
        return None;
    }
    let l = Lanes {
        stride: a.stride.wrapping_add(b.stride),
        extra: a.extra.wrapping_add(b.extra),
        width: a.width.min(b.width),
        jump: a.jump.wrapping_add(b.jump),
        align: a.align.min(b.align),
        max: bound(a.max.checked_add(b.max), bits),
    }
    .norm(bits);
    (l.jump == 0 || l.extra == 0).then_some(l)
}

/// A bound on `x - y` (form `d`): `x`'s, when no lane's difference goes
/// below zero. That holds when both are never negative, `y` is 0 in lane
/// 0 (a multiple of its alignment no greater than its bound: `t & 1` of
/// a warp-aligned `t`) and no lane's offset in `d` is negative, so every
/// lane's difference is lane 0's (`x`'s, at least 0) plus a non-negative
/// offset. The bitonic sort's `2t - (t & (s - 1))` then widens exactly.
fn difference_max(x: Lanes, y: Lanes, d: Lanes, bits: u32) -> u64 {
    let y_zero_at_0 = y.max == 0 || y.align > y.max;
    let up = d.jump == 0 && (0..32).all(|i| d.offset(i) >= 0);
    if non_negative(x.max, bits) && non_negative(y.max, bits) && y_zero_at_0 && up {
        x.max
    } else {
        d.max
    }
}

fn neg(a: Lanes, bits: u32) -> Lanes {
    Lanes {
        stride: a.stride.wrapping_neg(),
        extra: a.extra.wrapping_neg(),
        jump: a.jump.wrapping_neg(),
        max: UNBOUNDED,
        ..a
    }
    .norm(bits)
}

fn mul_const(a: Lanes, c: u64, bits: u32) -> Lanes {
    let c = low(c, bits);
    if c == 0 {
        return Lanes::uniform(cap(bits)).at_most(0);
    }
    let scale = 1u64 << c.trailing_zeros().min(62);
    Lanes {
        stride: a.stride.wrapping_mul(c as i64),
        extra: a.extra.wrapping_mul(c as i64),
        width: a.width,
        jump: a.jump.wrapping_mul(c as i64),
        align: a.align.saturating_mul(scale).min(cap(bits)),
        max: bound(a.max.checked_mul(c), bits),
    }
    .norm(bits)
}

fn mul(a: Opnd, b: Opnd, bits: u32) -> Option<Lanes> {
    match (a, b) {
        (x, Opnd::Imm(c)) | (Opnd::Imm(c), x) => Some(mul_const(x.lanes(bits), c, bits)),
        (Opnd::Reg(x), Opnd::Reg(y)) if x.is_uniform() && y.is_uniform() => Some(
            Lanes::uniform(x.align.saturating_mul(y.align).min(cap(bits)))
                .at_most(bound(x.max.checked_mul(y.max), bits)),
        ),
        _ => None,
    }
}

/// Sign or zero extension from `from` to `to` bits (see the module
/// comment) of the values of a warp of `lanes` lanes.
fn widen(a: Opnd, from: u32, to: u32, signed: bool, lanes: u32) -> Option<Opnd> {
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
        Opnd::Reg(l) if l.jump != 0 => None,
        Opnd::Reg(l) => {
            let half = 1u64 << (from - 1).min(62);
            let align = l.align.min(cap(from));
            // Every lane's value at most `max` < 2^(from-1), lanes less
            // than 2^(from-1) apart: no lane's value wrapped, so they all
            // extend to themselves (see `Lanes::max`).
            let close = || (0..lanes.min(32)).all(|i| l.offset(i).unsigned_abs() < half);
            if non_negative(l.max, from) && close() {
                return Some(Opnd::Reg(Lanes { align, ..l }));
            }
            if l.within(align.min(half), lanes) {
                let max = if signed { UNBOUNDED } else { l.max };
                return Some(Opnd::Reg(Lanes { align, max, ..l }));
            }
            // The values cross the jump point at most once: going up past
            // it, extension drops 2^from; going down (a reversed index,
            // `n - 1 - i`), it adds 2^from.
            let step = l.stride.unsigned_abs();
            let wraps = 1i64.wrapping_shl(from);
            (l.extra == 0 && l.stride != 0 && step.saturating_mul(31) < half).then(|| {
                Opnd::Reg(Lanes {
                    jump: wrap(
                        if l.stride > 0 {
                            wraps.wrapping_neg()
                        } else {
                            wraps
                        },
                        to,
                    ),
                    align,
                    max: UNBOUNDED,
                    ..l
                })
            })
        }
    }
}

/// Reading an operand at `bits` from a register of `rb` bits: low bits,
/// or a zero extension (as the emitter reads it).
fn at_width(a: Opnd, rb: u32, bits: u32, lanes: u32) -> Option<Opnd> {
    match a {
        Opnd::Imm(_) => Some(a),
        Opnd::Reg(l) if bits < rb => Some(Opnd::Reg(
            Lanes {
                align: l.align.min(cap(bits)),
                max: bound(Some(l.max), bits),
                ..l
            }
            .norm(bits),
        )),
        Opnd::Reg(_) if bits > rb => widen(a, rb, bits, false, lanes),
        _ => Some(a),
    }
}

/// Per register: its lane form, or `None` when lanes may hold anything.
///
/// An optimistic fixed point: every register starts unknown (`Lat::Top`)
/// and only moves down. Registers with one definition that dominates its
/// uses get the form of that definition wherever it runs (see the module
/// comment). Other registers (loop counters, values merged after a
/// branch) may be kept as one scalar only when every definition runs in a
/// convergent block, with every live lane of the warp (see `convergent`):
/// then each write gives every lane the same formula. Which blocks are
/// convergent depends on which branch conditions are uniform, hence the
/// iteration.
/// `liveness`: which registers are live where (see `uniform::liveness`).
pub fn lane_forms(
    m: &Module,
    p: &Prepared,
    shape: Shape,
    grid_fits: bool,
    warp: u32,
    liveness: &Liveness,
) -> LaneForms {
    analyse(m, p, (shape, grid_fits, warp), liveness, true, None)
}

/// `lane_forms`' forms where the lane of a jump need not be known, only
/// that there is at most one: registers written in several places (a
/// pointer stepped round a loop) keep a form with a jump when every write
/// gives the same one. For code that finds the jump itself (see
/// `lower::row_elems`), never for keeping registers as scalars.
pub fn forms_with_unplaced_jumps(
    m: &Module,
    p: &Prepared,
    shape: Shape,
    grid_fits: bool,
    warp: u32,
    liveness: &Liveness,
) -> Vec<Option<Lanes>> {
    analyse(m, p, (shape, grid_fits, warp), liveness, false, None).forms
}

/// The width of the block rows that `row_forms` describes, for blocks of
/// `shape` in warps of `warp` lanes: rows of 8 or 16 threads, several to a
/// warp, in a kernel that does not observe its warp (a row is not one).
pub(crate) fn row_width(p: &Prepared, shape: Shape, warp: u32) -> Option<u32> {
    let w = shape[0];
    let fits = warp > w && (8..=16).contains(&w) && w.is_power_of_two();
    (fits && crate::width::needs_full_warps(p).is_none()).then_some(w)
}

/// What `row_forms` is given about the whole warp.
pub(crate) struct Warp<'a> {
    /// Registers' forms across the warp (`LaneForms::forms`).
    pub forms: &'a [Option<Lanes>],
    /// Blocks every live lane runs together (`LaneForms::convergent`).
    pub convergent: &'a [bool],
    /// Registers the code keeps as vectors whatever their form
    /// (predicates, floats whose NaNs are made canonical where read).
    pub vectors: &'a [bool],
}

/// Per register with no form across the warp: its form in each block row
/// of `row_width` lanes (rows of a 16 x 16 block: two in a 32-lane warp),
/// exact in every row, so that a row's value is its first lane's plus the
/// lane's offset in the row, with no jump; `None` otherwise.
///
/// Such a register is kept as its rows' first values, taken from the
/// vector its instruction computes even where a row's first lane is off,
/// so only instructions whose every lane computes the formula qualify:
/// the arithmetic of `affine_form`, from operands kept as scalars or per
/// row (not `vectors`); not a division (whose lanes that are off divide
/// by 1) or a load (which they skip). Registers written in several places
/// qualify only when every write is in a block of `warp.convergent`: a
/// write by one row's lanes alone would leave the other rows' stale.
pub(crate) fn row_forms(
    m: &Module,
    p: &Prepared,
    (shape, grid_fits, row_width): (Shape, bool, u32),
    liveness: &Liveness,
    warp: &Warp,
) -> Vec<Option<Lanes>> {
    let forms = analyse(
        m,
        p,
        (shape, grid_fits, row_width),
        liveness,
        true,
        Some(warp),
    )
    .forms;
    forms
        .into_iter()
        .enumerate()
        .map(|(r, l)| {
            // (`vectors` are left without a form by the analysis.)
            l.filter(|l| l.jump == 0 && l.extra == 0)
                .filter(|_| warp.forms[r].is_none())
        })
        .collect()
}

fn analyse(
    m: &Module,
    p: &Prepared,
    (shape, grid_fits, warp): (Shape, bool, u32),
    liveness: &Liveness,
    place_jumps: bool,
    rows: Option<&Warp>,
) -> LaneForms {
    let at_entry = &liveness.at_entry;
    let f = &p.func;
    let n = f.regs.len();
    let reg_bits: Vec<u32> = f
        .regs
        .values()
        .map(|r| if r.ty == Ty::Pred { 1 } else { r.ty.bits() })
        .collect();
    let mut jumps: Vec<Option<JumpFrom>> = vec![None; n];
    let Some(&entry) = p.order.first() else {
        return LaneForms {
            forms: vec![None; n],
            jumps,
            convergent: vec![false; f.blocks.len()],
            earliest_after_yield: vec![false; f.blocks.len()],
        };
    };
    let cfg = Cfg::new(f, entry);
    // Each register's definitions (block, index); reachable blocks only.
    let mut def_at: Vec<Vec<(BlockId, usize)>> = vec![Vec::new(); n];
    let mut unfit = vec![false; n];
    for (bid, b) in f.blocks.iter() {
        if !cfg.dom.reachable(bid.0 as usize) {
            continue;
        }
        for (ix, i) in b.insts.iter().enumerate() {
            let partial = partial_def(i);
            for d in defs(&i.kind) {
                def_at[d.0 as usize].push((bid, ix));
                unfit[d.0 as usize] |= partial;
            }
        }
    }
    // One definition that dominates every use.
    let single = crate::uniform::defined_before_reads(f, &cfg.dom);
    let parks = cfg.parking(f, p, &liveness.live_in);
    // Registers holding one constant wherever they are read (a single
    // move of it dominates every use): operands as good as immediates
    // (packing turns `%ntid.x` into such a move, and `ctaid * ntid` must
    // still scale rows of lanes).
    let consts = crate::uniform::constants(f);
    let konst: Vec<Option<u64>> = (0..n)
        .map(|r| {
            let c = consts.get(&Reg(r as u32)).copied().filter(|_| single[r])?;
            Some(low(c, reg_bits[r]))
        })
        .collect();
    let mut lat = vec![Lat::Top; n];
    let uniform_in = |lat: &[Lat], r: Reg| match lat[r.0 as usize] {
        Lat::Top => true,
        Lat::Form(l) => l.is_uniform(),
        Lat::Bottom => false,
    };
    let convergent = loop {
        let conv: std::borrow::Cow<[bool]> = match rows {
            Some(w) => w.convergent.into(),
            None => cfg
                .convergent(f, p, &parks, &|r: Reg| uniform_in(&lat, r))
                .into(),
        };
        let mut changed = false;
        for r in 0..n {
            if lat[r] == Lat::Bottom {
                continue;
            }
            // (Per row, only what the whole warp keeps as a scalar may
            // come from instructions other than `affine_form`'s.)
            let any_kind = rows.is_none_or(|w| w.forms[r].is_some());
            let new = if def_at[r].is_empty() || unfit[r] || rows.is_some_and(|w| w.vectors[r]) {
                Lat::Bottom
            } else if single[r] {
                let (b, ix) = def_at[r][0];
                eval(
                    m,
                    &f.blocks[b].insts[ix],
                    Reg(r as u32),
                    (shape, grid_fits, warp),
                    (&lat, &konst),
                    &reg_bits,
                    any_kind,
                )
            } else if def_at[r].iter().all(|(b, _)| conv[b.0 as usize]) {
                // Lanes that may read the register before any definition
                // see its initial zero.
                let mut acc = if at_entry[r] {
                    Lat::Form(Lanes::uniform(cap(reg_bits[r])))
                } else {
                    Lat::Top
                };
                for &(b, ix) in &def_at[r] {
                    let i = &f.blocks[b].insts[ix];
                    acc = acc.meet(
                        eval(
                            m,
                            i,
                            Reg(r as u32),
                            (shape, grid_fits, warp),
                            (&lat, &konst),
                            &reg_bits,
                            any_kind,
                        ),
                        place_jumps,
                    );
                }
                // A jump's lane belongs to one definition.
                match acc {
                    Lat::Form(l) if l.jump != 0 && place_jumps => Lat::Bottom,
                    x => x,
                }
            } else {
                Lat::Bottom
            };
            let new = lat[r].meet(new, place_jumps);
            if new != lat[r] {
                lat[r] = new;
                changed = true;
            }
        }
        if !changed {
            break conv.into_owned();
        }
    };
    let out: Vec<Option<Lanes>> = lat
        .iter()
        .map(|l| match l {
            Lat::Form(l) => Some(*l),
            // Never defined in reachable code, or only in cycles that
            // never got a value: keep per-lane values.
            _ => None,
        })
        .collect();
    let mut forms = out.clone();
    for r in 0..n {
        if place_jumps && out[r].is_some_and(|l| l.jump != 0) {
            let (b, ix) = def_at[r][0];
            let from = jump_from(&f.blocks[b].insts[ix].kind, &out, &reg_bits, warp);
            if from.is_none() {
                forms[r] = None;
            }
            jumps[r] = from;
        }
    }
    let earliest_after_yield = cfg.earliest_regions(f, &parks, &convergent);
    LaneForms {
        forms,
        jumps,
        convergent,
        earliest_after_yield,
    }
}

/// A register's lane form while the analysis runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lat {
    /// Not known yet (optimistic).
    Top,
    Form(Lanes),
    /// Lanes may hold anything.
    Bottom,
}

impl Lat {
    /// With `place_jumps`, forms with a jump meet only their equal (the
    /// jump's lane must come from one definition).
    fn meet(self, o: Lat, place_jumps: bool) -> Lat {
        match (self, o) {
            (Lat::Top, x) | (x, Lat::Top) => x,
            (Lat::Form(a), Lat::Form(b)) if a == b => Lat::Form(a),
            // Bounds that differ are dropped at once (not widened step by
            // step: a loop counter would take 2^32 rounds).
            (Lat::Form(a), Lat::Form(b))
                if Lanes {
                    align: 0,
                    max: 0,
                    ..a
                } == Lanes {
                    align: 0,
                    max: 0,
                    ..b
                } && (a.jump == 0 || !place_jumps) =>
            {
                Lat::Form(Lanes {
                    align: a.align.min(b.align),
                    max: if a.max == b.max { a.max } else { UNBOUNDED },
                    ..a
                })
            }
            _ => Lat::Bottom,
        }
    }
}

/// The form an (unguarded) instruction gives register `d` (one of its
/// results), from its operands' current forms.
fn eval(
    m: &Module,
    i: &Inst,
    d: Reg,
    (shape, grid_fits, warp): (Shape, bool, u32),
    (lat, konst): (&[Lat], &[Option<u64>]),
    reg_bits: &[u32],
    any_kind: bool,
) -> Lat {
    let k = &i.kind;
    let ds = defs(k);
    if uses(i).iter().any(|r| lat[r.0 as usize] == Lat::Top) {
        return Lat::Top;
    }
    let get = |v: Value| -> Option<Opnd> {
        match v {
            Value::Imm(x) => Some(Opnd::Imm(x)),
            Value::Reg(r) => match (konst[r.0 as usize], lat[r.0 as usize]) {
                (Some(c), _) => Some(Opnd::Imm(c)),
                (None, Lat::Form(l)) => Some(Opnd::Reg(l)),
                _ => None,
            },
        }
    };
    let rb = |v: Value| match v {
        Value::Reg(r) => reg_bits[r.0 as usize],
        Value::Imm(_) => 64,
    };
    if ds.len() == 1 {
        if let Some((l, bits)) = affine_form(k, (shape, grid_fits, warp), &get, &rb) {
            if bits == reg_bits[d.0 as usize] {
                return Lat::Form(l);
            }
        }
    }
    // Otherwise uniform when every operand is.
    let uniform = any_kind
        && uniform_operands(m, k).is_some_and(|ops| {
            ops.iter()
                .all(|v| get(*v).is_some_and(|o| o.lanes(64).is_uniform()))
        });
    if uniform {
        Lat::Form(Lanes::uniform(1))
    } else {
        Lat::Bottom
    }
}

/// Where the jump of an instruction's result comes from (see `JumpFrom`).
fn jump_from(
    k: &InstKind,
    forms: &[Option<Lanes>],
    reg_bits: &[u32],
    lanes: u32,
) -> Option<JumpFrom> {
    let form = |v: &Value| match v {
        Value::Reg(r) => forms[r.0 as usize],
        Value::Imm(_) => None,
    };
    let widening = |v: &Value, bits: u32, to: u32, signed: bool| -> Option<JumpFrom> {
        let Value::Reg(r) = v else { return None };
        let l = form(v)?;
        let w = widen(
            at_width(Opnd::Reg(l), reg_bits[r.0 as usize], bits, lanes)?,
            bits,
            to,
            signed,
            lanes,
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

/// 2^k when `c` (below 2^`bits`) is -2^k (k >= 1) at `bits`: an `and`
/// with it clears the low k bits.
fn high_mask(c: u64, bits: u32) -> Option<u64> {
    let low_bits = !c & low(u64::MAX, bits);
    let block = low_bits.checked_add(1)?;
    (low_bits != 0 && block.is_power_of_two() && c != 0).then_some(block)
}

/// The lane form of an instruction's single result and its width in bits,
/// for the instructions that can give affine values.
fn affine_form(
    k: &InstKind,
    (shape, grid_fits, warp): (Shape, bool, u32),
    get: &dyn Fn(Value) -> Option<Opnd>,
    rb: &dyn Fn(Value) -> u32,
) -> Option<(Lanes, u32)> {
    // An operand read at `bits`.
    let arg = |v: Value, bits: u32| at_width(get(v)?, rb(v), bits, warp);
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
                IntOp::Sub => {
                    let (x, y) = (a(0, b)?.lanes(b), a(1, b)?.lanes(b));
                    let d = add(x, neg(y, b), b)?;
                    Lanes {
                        max: difference_max(x, y, d, b),
                        ..d
                    }
                }
                IntOp::Neg => neg(a(0, b)?.lanes(b), b),
                IntOp::MulLo => mul(a(0, b)?, a(1, b)?, b)?,
                IntOp::MadLo => add(mul(a(0, b)?, a(1, b)?, b)?, a(2, b)?.lanes(b), b)?,
                IntOp::Shl => match args.get(1)? {
                    Value::Imm(k) if low(*k, 32) >= u64::from(b) => Lanes::uniform(cap(b)),
                    Value::Imm(k) => mul_const(a(0, b)?.lanes(b), 1u64 << low(*k, 32), b),
                    _ => return None,
                },
                // Lanes inside one aligned block of 2^k: the shift is the
                // same for all, the low bits count up from zero, clearing
                // them (`and` with -2^k, as compilers write `x - x % 2^k`)
                // rounds all down alike.
                IntOp::Shr | IntOp::And => {
                    let x = a(0, b)?.lanes(b);
                    let Value::Imm(c) = *args.get(1)? else {
                        return None;
                    };
                    let c = low(c, b);
                    let clear = if *op == IntOp::And {
                        high_mask(c, b)
                    } else {
                        None
                    };
                    let k = match (op, clear) {
                        (IntOp::Shr, _) => c,
                        (_, Some(block)) => u64::from(block.trailing_zeros()),
                        _ => u64::from((c.wrapping_add(1)).trailing_zeros()),
                    };
                    let block = 1u64.checked_shl(k as u32).filter(|_| k < u64::from(b))?;
                    // A shift of a value known non-negative (or unsigned)
                    // is bounded by the shifted bound; shifted to nothing,
                    // it is zero (the sign of `gid` in `gid / 16`).
                    let plain = !ty.is_signed() || non_negative(x.max, b);
                    let max = match op {
                        IntOp::Shr if plain => x.max >> k,
                        IntOp::Shr => UNBOUNDED,
                        _ if clear.is_some() => x.max,
                        _ => x.max.min(c),
                    };
                    if *op == IntOp::Shr && max == 0 {
                        return Some((Lanes::uniform(cap(b)).at_most(0), b));
                    }
                    // Lane 0's value is a multiple of `align`; the others
                    // stay below the next multiple, hence inside its block.
                    let inside = x.jump == 0 && x.within(x.align.min(block), warp);
                    // Consecutive lanes and blocks narrower than the warp:
                    // rows of `block` lanes.
                    let rows = !inside
                        && x.jump == 0
                        && x.extra == 0
                        && x.stride == 1
                        && x.align >= block
                        && block < u64::from(warp);
                    // Lane 0's value over 2^k: a multiple of align / 2^k.
                    let shifted = if x.align >= cap(b) {
                        cap(b)
                    } else {
                        (x.align >> k).max(1)
                    };
                    match op {
                        // One block: lane 0's value rounded down, in all.
                        _ if clear.is_some() && inside => {
                            Lanes::uniform(x.align.max(block).min(cap(b))).at_most(max)
                        }
                        // Consecutive lanes: rows of `block` lanes.
                        _ if clear.is_some() && rows => Lanes {
                            stride: 0,
                            extra: block as i64,
                            width: block as u32,
                            jump: 0,
                            align: x.align,
                            max,
                        },
                        _ if clear.is_some() => return None,
                        IntOp::Shr if rows => Lanes {
                            stride: 0,
                            extra: 1,
                            width: block as u32,
                            jump: 0,
                            align: shifted,
                            max,
                        },
                        _ if rows && c == block - 1 => Lanes {
                            stride: 1,
                            extra: -(block as i64),
                            width: block as u32,
                            jump: 0,
                            align: cap(b),
                            max,
                        },
                        _ if !inside => return None,
                        IntOp::Shr => Lanes::uniform(shifted).at_most(max),
                        // `and` with 2^k - 1 only.
                        _ if c == block - 1 => Lanes {
                            align: if x.align >= block { cap(b) } else { x.align },
                            max,
                            ..x
                        },
                        _ => return None,
                    }
                }
                IntOp::MulWide | IntOp::MadWide => {
                    let s = ty.is_signed();
                    let x = widen(a(0, b)?, b, 2 * b, s, warp)?;
                    let y = widen(a(1, b)?, b, 2 * b, s, warp)?;
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
                widen(x, fb, tb, src_ty.is_signed(), warp)?
            } else {
                at_width(x, fb, tb, warp)?
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
                    align: 1,
                    max: UNBOUNDED,
                    ..l
                },
                *bits,
            ))
        }
        InstKind::ReadSpecial { sreg, .. } => {
            let [x, y, _] = shape;
            // Rows of x < warp threads, whole rows per warp. Lane 0 of a
            // warp of `warp` lanes is thread warp * index.
            let rows = x < warp && warp % x == 0 && (x * y) % warp == 0;
            let l = match sreg {
                Special::Tid(0) if x == 1 => Lanes::uniform(cap(32)),
                Special::Tid(0) if x % warp == 0 || shape[1] * shape[2] == 1 => {
                    Lanes::affine(1, u64::from(warp))
                }
                Special::Tid(0) if rows => Lanes {
                    stride: 1,
                    extra: -i64::from(x),
                    width: x,
                    jump: 0,
                    align: cap(32),
                    max: UNBOUNDED,
                },
                Special::Tid(1) if y == 1 => Lanes::uniform(cap(32)),
                Special::Tid(1) if x % warp == 0 => Lanes::uniform(1),
                Special::Tid(1) if rows => Lanes {
                    stride: 0,
                    extra: 1,
                    width: x,
                    jump: 0,
                    align: u64::from(warp / x),
                    max: UNBOUNDED,
                },
                Special::Tid(2) if shape[2] == 1 => Lanes::uniform(cap(32)),
                Special::Tid(2) if (x * y) % warp == 0 => Lanes::uniform(1),
                Special::Ntid(c) => Opnd::Imm(u64::from(shape[*c as usize])).lanes(32),
                Special::LaneId => Lanes::affine(1, cap(32)),
                // Grids are below 2^31 CTAs in x and 2^16 in y and z; code
                // compiled for launches that keep `%ctaid * %ntid + %ntid`
                // within 2^31 (see `grid_fits`) knows more.
                Special::Ctaid(c) => {
                    let d = *c as usize;
                    let max = if grid_fits {
                        (1u64 << 31) / u64::from(shape[d].max(1)) - 1
                    } else if d == 0 {
                        (1u64 << 31) - 2
                    } else {
                        (1u64 << 16) - 2
                    };
                    return Some((Lanes::uniform(1).at_most(max), 32));
                }
                _ => return None,
            };
            // `%tid`, `%laneid`: below the block's (the warp's) size.
            let max = match sreg {
                Special::Tid(c) => u64::from(shape[*c as usize].max(1)) - 1,
                Special::LaneId => 31,
                _ => l.max,
            };
            Some((l.at_most(max), 32))
        }
        _ => None,
    }
}

/// The control-flow facts the analysis needs.
struct Cfg {
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    dom: Dominators,
    /// Post-dominators: node `succs.len()` is a virtual exit after every
    /// block that ends the thread.
    pdom: Dominators,
    /// Blocks that only end the thread (no instructions).
    exit_only: Vec<bool>,
}

/// The blocks `b` may go to next.
pub(crate) fn succs(b: &Block) -> Vec<BlockId> {
    match &b.term {
        Some(Terminator::Jump(t)) => vec![*t],
        Some(Terminator::Branch { then, els, .. }) => vec![*then, *els],
        _ => vec![],
    }
}

impl Cfg {
    fn new(f: &Function, entry: BlockId) -> Cfg {
        let nb = f.blocks.len();
        let mut succ = vec![Vec::new(); nb];
        let mut preds = vec![Vec::new(); nb];
        let mut exits = Vec::new();
        let mut exit_only = vec![false; nb];
        for (bid, b) in f.blocks.iter() {
            let i = bid.0 as usize;
            succ[i] = succs(b).iter().map(|s| s.0 as usize).collect();
            for &s in &succ[i] {
                preds[s].push(i);
            }
            if matches!(b.term, Some(Terminator::Exit | Terminator::Return)) {
                exits.push(i);
                exit_only[i] = b.insts.iter().all(|x| matches!(x.kind, InstKind::Nop));
            }
        }
        let dom = Dominators::new(nb, entry.0 as usize, &|b| succ[b].clone());
        // Unreachable blocks never run: they are nobody's predecessor.
        for p in preds.iter_mut() {
            p.retain(|&x| dom.reachable(x));
        }
        exits.retain(|&x| dom.reachable(x));
        let pdom = Dominators::new(nb + 1, nb, &|b| {
            if b == nb {
                exits.clone()
            } else {
                preds[b].clone()
            }
        });
        Cfg {
            succs: succ,
            preds,
            dom,
            pdom,
            exit_only,
        }
    }

    /// Blocks that, whenever they run, run with every lane of the warp
    /// that has not exited (lanes parked at blocks that only exit aside).
    /// A greatest fixed point: a block is convergent when every edge into
    /// it comes from a convergent block through a jump or a branch whose
    /// condition is uniform, or through a divergent branch whose other side
    /// only exits; or when it is where the lanes of a divergent branch in a
    /// convergent block meet again. The scheduler (earliest block first)
    /// guarantees that meeting when the blocks between the branch and its
    /// post-dominator lie between them in block order, are entered only
    /// from the branch, and hold no loop: no group can get past the meeting
    /// point before the other arrives, and without a backward jump no yield
    /// can hand the turn to the latest lanes.
    ///
    /// Lanes that leave by a divergent branch for a parking block (see
    /// `parking`) are set aside as well: the blocks the others run until
    /// they get there count as convergent too (the lanes of a grid-stride
    /// loop, say, which leave it one by one for the block after it).
    fn convergent(
        &self,
        f: &Function,
        p: &Prepared,
        parks: &[Option<usize>],
        uniform: &dyn Fn(Reg) -> bool,
    ) -> Vec<bool> {
        let nb = self.succs.len();
        let id = |b: usize| p.id_of[b];
        let entry = p.order[0].0 as usize;
        let mut conv: Vec<bool> = (0..nb).map(|b| self.dom.reachable(b)).collect();
        let divergent = |b: usize| match &f.blocks[BlockId(b as u32)].term {
            Some(Terminator::Branch { pred, .. }) => !uniform(*pred),
            _ => false,
        };
        loop {
            let mut changed = false;
            for b in 0..nb {
                if !conv[b] || b == entry && self.preds[b].is_empty() {
                    continue;
                }
                let by_edges = self.preds[b].iter().all(|&x| {
                    conv[x]
                        && (!divergent(x)
                            || self.succs[x].iter().all(|&s| {
                                s == b || self.exit_only[s] || parks[x] == Some(self.through(f, s))
                            }))
                });
                let ok = by_edges
                    || (b != entry && self.rejoins(b, &conv, &divergent, &id))
                    || self.meets(f, b, parks, &conv).is_some();
                if !ok {
                    conv[b] = false;
                    changed = true;
                }
            }
            if !changed {
                return conv;
            }
        }
    }

    /// Per block ending in a branch: its immediate post-dominator `x` when
    /// lanes that go there can wait there while the others run the rest
    /// of the region between (blocks reachable from the branch without
    /// passing `x`), with no effect on either: the region lies before `x`
    /// in block order (the scheduler runs it first), `x` never leads back
    /// into it (lanes that left never return to meet the others midway,
    /// even when a yield lets the latest lanes run first), it holds no
    /// warp collective or barrier (which would wait for the lanes at `x`)
    /// and it writes no register live at `x` (so its writes need not keep
    /// the waiting lanes' values).
    fn parking(&self, f: &Function, p: &Prepared, live_in: &[Vec<bool>]) -> Vec<Option<usize>> {
        let nb = self.succs.len();
        let id = |b: usize| p.id_of[b];
        let reach = |from: &[usize], stop: usize| -> Vec<bool> {
            let mut seen = vec![false; nb];
            let mut stack: Vec<usize> = from.iter().copied().filter(|&s| s != stop).collect();
            while let Some(b) = stack.pop() {
                if seen[b] {
                    continue;
                }
                seen[b] = true;
                stack.extend(self.succs[b].iter().copied().filter(|&s| s != stop));
            }
            seen
        };
        (0..nb)
            .map(|d| {
                if self.succs[d].len() != 2 || !self.dom.reachable(d) {
                    return None;
                }
                let x = self.pdom.idom_of(d).filter(|&x| x < nb)?;
                // Lanes go on through blocks that only jump.
                let x = self.through(f, x);
                let region = self.region(d, x);
                let after_x = reach(&self.succs[x], nb);
                let fits = (0..nb).filter(|&b| region[b]).all(|b| {
                    id(b) < id(x)
                        && !after_x[b]
                        && f.blocks[BlockId(b as u32)].insts.iter().all(|i| {
                            !crate::prepare::is_sync_point(&i.kind)
                                && defs(&i.kind).iter().all(|r| !live_in[x][r.0 as usize])
                        })
                });
                fits.then_some(x)
            })
            .collect()
    }

    /// Where lanes sent to block `s` end up before running an instruction:
    /// through blocks that only jump on.
    fn through(&self, f: &Function, mut s: usize) -> usize {
        for _ in 0..self.succs.len() {
            match self.transparent(f, s) {
                Some(t) => s = t,
                None => break,
            }
        }
        s
    }

    /// The target of block `b` when it only jumps there.
    fn transparent(&self, f: &Function, b: usize) -> Option<usize> {
        let blk = &f.blocks[BlockId(b as u32)];
        match (&blk.term, self.succs[b].as_slice()) {
            (Some(Terminator::Jump(_)), [t])
                if blk.insts.iter().all(|i| matches!(i.kind, InstKind::Nop)) =>
            {
                Some(*t)
            }
            _ => None,
        }
    }

    /// The region between a convergent divergent branch `d` and its
    /// parking block `b` when every lane that was at `d` meets at `b`
    /// before `b` runs: the region is entered only through `d`, every block
    /// of it is convergent (every lane in it runs together, so no
    /// dispatcher) and no branch in it depends on memory (its lanes never
    /// wait for lanes elsewhere). Then the scheduler, earliest block first,
    /// runs the region to its end before `b`, also after a yield, which
    /// there hands the turn to the earliest lanes (see
    /// `earliest_after_yield`): `b` runs with every lane.
    fn meets(
        &self,
        f: &Function,
        b: usize,
        parks: &[Option<usize>],
        conv: &[bool],
    ) -> Option<Vec<bool>> {
        let nb = self.succs.len();
        // The branch whose lanes meet here dominates every way in.
        let d = self.dom.idom_of(b)?;
        if parks[d] != Some(b) || !conv[d] {
            return None;
        }
        let region = self.region(d, b);
        let inside = |x: usize| region[x] || x == d;
        // (A loop that is itself the branch is entered from outside only
        // at `d`, which is convergent: by every lane at once.)
        let entered_from_d = (0..nb)
            .filter(|&x| region[x] && x != d)
            .all(|x| self.preds[x].iter().all(|&y| inside(y)));
        let members_fit = (0..nb)
            .filter(|&x| region[x])
            .all(|x| conv[x] || self.transparent(f, x).is_some());
        let fits = entered_from_d
            && members_fit
            && self.preds[b].iter().all(|&y| inside(y))
            && progressive(f, &region);
        fits.then_some(region)
    }

    /// Blocks reachable from `d`'s successors without passing `x`.
    fn region(&self, d: usize, x: usize) -> Vec<bool> {
        let nb = self.succs.len();
        let mut seen = vec![false; nb];
        let mut stack: Vec<usize> = self.succs[d].iter().copied().filter(|&s| s != x).collect();
        while let Some(b) = stack.pop() {
            if seen[b] {
                continue;
            }
            seen[b] = true;
            stack.extend(self.succs[b].iter().copied().filter(|&s| s != x));
        }
        seen
    }

    /// Blocks where a yield resumes with the earliest lanes: the regions
    /// of the meeting points (see `meets`).
    fn earliest_regions(&self, f: &Function, parks: &[Option<usize>], conv: &[bool]) -> Vec<bool> {
        let nb = self.succs.len();
        let mut out = vec![false; f.blocks.len()];
        for b in 0..nb {
            if !conv[b] {
                continue;
            }
            if let Some(region) = self.meets(f, b, parks, conv) {
                for x in 0..nb {
                    out[x] |= region[x];
                }
            }
        }
        out
    }

    /// Whether block `b` is where the two sides of a divergent branch in a
    /// convergent block meet again (see `convergent`).
    fn rejoins(
        &self,
        b: usize,
        conv: &[bool],
        divergent: &dyn Fn(usize) -> bool,
        id: &dyn Fn(usize) -> u32,
    ) -> bool {
        // The branch dominates `b`; walk up its dominators.
        let nb = self.succs.len();
        let mut d = b;
        while let Some(up) = self.dom.idom_of(d) {
            d = up;
            if !(conv[d] && divergent(d) && self.pdom.idom_of(d) == Some(b)) {
                if d == self.dom.entry() {
                    return false;
                }
                continue;
            }
            // The region between: reachable from d without passing b.
            let mut region = vec![false; nb];
            let mut stack: Vec<usize> = self.succs[d].iter().copied().filter(|&s| s != b).collect();
            while let Some(x) = stack.pop() {
                if region[x] {
                    continue;
                }
                if x == d || id(x) <= id(d) || id(x) >= id(b) {
                    return false;
                }
                region[x] = true;
                for &s in &self.succs[x] {
                    if s == b {
                        continue;
                    }
                    if id(s) <= id(x) {
                        return false;
                    }
                    stack.push(s);
                }
            }
            let inside = |x: &usize| region[*x] || *x == d;
            return (0..nb)
                .filter(|&x| region[x])
                .all(|x| self.preds[x].iter().all(inside))
                && self.preds[b].iter().all(inside);
        }
        false
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
        assert_eq!(
            form(widen(tid, 32, 64, true, 32)),
            Some(Lanes::affine(1, 32))
        );
        // Scaling scales the alignment too: still one aligned interval.
        let scaled = Opnd::Reg(mul_const(tid.lanes(32), 4, 32));
        assert_eq!(
            form(widen(scaled, 32, 64, true, 32)),
            Some(Lanes::affine(4, 128))
        );
        // Stride 4 over 32 lanes spans 128: lane 0 at a multiple of 32
        // may straddle 2^31, so the value may jump by -2^32.
        let wide = Opnd::Reg(Lanes::affine(4, 32));
        let w = form(widen(wide, 32, 64, true, 32)).unwrap();
        assert_eq!((w.stride, w.jump), (4, -(1i64 << 32)));
        let h = form(widen(Opnd::Reg(Lanes::affine(1, 1)), 16, 32, false, 32)).unwrap();
        assert_eq!((h.stride, h.jump), (1, -(1i64 << 16)));
        // Falling values (`n - 1 - i`) may pass below the bottom of the
        // range going down: a jump of +2^32.
        let down = form(widen(
            Opnd::Reg(Lanes::affine(-1, 1 << 20)),
            32,
            64,
            true,
            32,
        ))
        .unwrap();
        assert_eq!((down.stride, down.jump), (-1, 1i64 << 32));
        // Jumps of jumps make no form.
        assert!(widen(Opnd::Reg(h), 32, 64, true, 32).is_none());
        // Strides so large that 32 lanes may cross twice.
        assert!(widen(Opnd::Reg(Lanes::affine(1 << 27, 1)), 32, 64, true, 32).is_none());
        // A 16-lane warp of a 16-wide row (`%tid.x` plus a multiple of
        // 16): its lanes share one aligned block of 16, so none jumps;
        // the same form over 32 lanes may straddle the jump point.
        let row = Opnd::Reg(Lanes::affine(1, 16));
        assert_eq!(
            form(widen(row, 32, 64, true, 16)),
            Some(Lanes::affine(1, 16))
        );
        let w = form(widen(row, 32, 64, true, 32)).unwrap();
        assert_eq!((w.stride, w.jump), (1, -(1i64 << 32)));
    }

    /// `t & (s - 1)` of a warp-aligned thread index below 512.
    fn low_bits(s: u64) -> Lanes {
        let tid = Lanes::affine(1, 32).at_most(511);
        Lanes {
            stride: 1,
            extra: -(s as i64),
            width: s as u32,
            jump: 0,
            align: tid.align,
            max: s - 1,
        }
    }

    #[test]
    fn differences_that_never_go_below_lane_0s_keep_a_bound() {
        let two_t = Lanes::affine(2, 64).at_most(1022);
        for s in [2, 4, 16] {
            let y = low_bits(s);
            // The sorting network's 2t - (t & (s - 1)): rows of s lanes.
            let d = add(two_t, neg(y, 32), 32).unwrap();
            assert_eq!(difference_max(two_t, y, d, 32), 1022, "s = {s}");
            // ...so it widens with no jump.
            let w = form(widen(Opnd::Reg(Lanes { max: 1022, ..d }), 32, 64, true, 32)).unwrap();
            assert_eq!(
                (w.jump, w.stride, w.extra, w.width),
                (0, 1, s as i64, s as u32)
            );
        }
        // t - 2 (t & 1) goes below lane 0's value (lane 1: t0 - 1).
        let t = Lanes::affine(1, 32).at_most(511);
        let y = mul_const(low_bits(2), 2, 32);
        let d = add(t, neg(y, 32), 32).unwrap();
        assert_eq!(difference_max(t, y, d, 32), UNBOUNDED);
        // (t & 1) + 1 is 1 in lane 0: lane 0's difference may be negative.
        let y = add(low_bits(2), Opnd::Imm(1).lanes(32), 32).unwrap();
        let d = add(two_t, neg(y, 32), 32).unwrap();
        assert_eq!(difference_max(two_t, y, d, 32), UNBOUNDED);
        // Nothing known of the minuend: none of its values may be negative.
        let x = Lanes::affine(2, 64);
        let d = add(x, neg(low_bits(2), 32), 32).unwrap();
        assert_eq!(difference_max(x, low_bits(2), d, 32), UNBOUNDED);
    }

    #[test]
    fn arithmetic_wraps_at_the_width() {
        let l = Lanes::affine(1 << 30, 1);
        assert_eq!(mul_const(l, 4, 32).stride, 0);
        assert_eq!(add(l, l, 32).unwrap().stride, i64::from(i32::MIN));
        // Truncating a widened value drops its jump.
        let j = Lanes {
            stride: 4,
            extra: 0,
            width: 32,
            jump: -(1i64 << 32),
            align: 1,
            max: UNBOUNDED,
        };
        let t = at_width(Opnd::Reg(j), 64, 32, 32).unwrap().lanes(32);
        assert_eq!(t, Lanes::affine(4, 1));
        assert!(add(j, j, 64).is_none());
    }
}

/// Whether no branch in `region` depends on memory or the clock: its lanes
/// leave it whatever other lanes do. Registers written there from memory
/// (or from such registers) are tainted; no branch may test one.
fn progressive(f: &Function, region: &[bool]) -> bool {
    let n = f.regs.len();
    let mut tainted = vec![false; n];
    let blocks: Vec<&Block> = (0..region.len())
        .filter(|&b| region[b])
        .map(|b| &f.blocks[BlockId(b as u32)])
        .collect();
    loop {
        let mut changed = false;
        for b in &blocks {
            for i in &b.insts {
                let from_memory = !pure(&i.kind) || uses(i).iter().any(|r| tainted[r.0 as usize]);
                if from_memory {
                    for d in defs(&i.kind) {
                        if !tainted[d.0 as usize] {
                            tainted[d.0 as usize] = true;
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    blocks.iter().all(|b| match &b.term {
        Some(Terminator::Branch { pred, .. }) => !tainted[pred.0 as usize],
        _ => true,
    })
}

/// Instructions whose results depend only on their operands.
pub(crate) fn pure(k: &InstKind) -> bool {
    match k {
        InstKind::ReadSpecial { sreg, .. } => !matches!(
            sreg,
            Special::Clock | Special::Clock64 | Special::GlobalTimer
        ),
        InstKind::Mov { .. }
        | InstKind::AddrOf { .. }
        | InstKind::Int { .. }
        | InstKind::Carry { .. }
        | InstKind::Float { .. }
        | InstKind::Setp { .. }
        | InstKind::Set { .. }
        | InstKind::Selp { .. }
        | InstKind::Slct { .. }
        | InstKind::PredOp { .. }
        | InstKind::Testp { .. }
        | InstKind::Cvt { .. }
        | InstKind::IsSpace { .. }
        | InstKind::Cvta { .. }
        | InstKind::Pack { .. }
        | InstKind::Nop => true,
        _ => false,
    }
}
