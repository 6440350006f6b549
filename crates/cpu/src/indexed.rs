//! Accesses `p[i]` through a 32-bit index that is not affine in the lane
//! (a CSR column, a bucket, a permutation): PTX forms the address as
//! `mul.wide.s32 t, i, size; add.s64 a, p, t` (or one `mad.wide`). Whether
//! the lanes' elements are consecutive is then a test on the 32-bit
//! indices, 4 vector instructions at 32 lanes, not on 64-bit addresses
//! (widened, shifted, added and compared: 25), and the 64-bit addresses are
//! only formed where the elements are not consecutive.

use crate::emit::{iota, Emitter as Gen};
use warpfold_ir::*;

/// Lane addresses `base + ext(idx) * scale`: `base` (`i64`) the same for
/// every lane, `idx` the lanes' indices (`<W x i32>`), extended as signed
/// or unsigned.
pub(crate) struct Indexed {
    base: String,
    idx: String,
    signed: bool,
    scale: u32,
    /// The register the indices come from (32 bits, or 64 holding a
    /// zero-extended narrow value).
    source: Reg,
}

/// Where each lane's index of an `Indexed` access can be read again by
/// scalar code: a load earlier in the block, with only pure instructions
/// between, read it from global memory at lane 0's host address `h0` plus
/// the lane times `stride` (a histogram's `data[i] & 255`, loaded as a
/// byte), and what it loaded goes nowhere but into this address. Reading
/// the index there again costs one scalar load a lane; moving it out of
/// the vector the load made costs more (a vector stored and read back a
/// lane at a time waits for store forwarding: in a C model of the
/// histogram's lane loop on the Xeon, 18-26 ms against 13-14 ms for 16M
/// bins).
pub(crate) struct Replay {
    pub h0: String,
    pub stride: i64,
    /// Bits the load read, zero-extended to the index.
    pub bits: u32,
    /// The lane of the load address's jump (W: none), if its form has one
    /// (see `lanes`): only without one are the addresses `h0 + lane * stride`.
    pub jump: Option<String>,
}

/// `[addr]` as an element of one array through a 32-bit index for every
/// lane, `size` bytes an element (global or generic memory).
pub(crate) fn indexed<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    size: u32,
) -> Option<Indexed> {
    if !matches!(space, Space::Global | Space::Generic) {
        return None;
    }
    index_form(g, addr, space).filter(|ix| ix.scale == size)
}

/// Where a 64-bit offset's 32-bit index comes from.
enum Index {
    /// A 32-bit register.
    Reg32(Reg),
    /// A 64-bit register holding a zero-extended value of at most 32 bits
    /// (a byte loaded into a 64-bit register, say).
    Narrow64(Reg),
}

/// The form of the address `[addr]` of the access being lowered when it
/// is `base + ext(i) * scale` with `base` the same for every lane and `i`
/// 32 bits: `mul.wide` or `mad.wide` of a 32-bit index, or a shift of a
/// widened or zero-extended narrow one, added to a uniform base (global,
/// generic or shared memory), worked out from the instructions before the
/// access in its block (only from definitions whose operands nothing
/// changes up to the access).
pub(crate) fn index_form<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
) -> Option<Indexed> {
    let (base, idx, signed, scale) = index_parts(g, addr, space)?;
    // For tests and readers of the generated code.
    g.line("; indexed access");
    let b = match base {
        Value::Imm(x) => x.to_string(),
        Value::Reg(u) => g.def(&format!("load i64, i64* %r{}", u.0)),
    };
    let mut base = g.def(&format!("add i64 {b}, {}", addr.offset));
    if space == Space::Shared {
        let s = g.env(crate::emit::env::SHARED);
        base = g.def(&format!("add i64 {base}, {s}"));
    }
    let source = match idx {
        Index::Reg32(x) | Index::Narrow64(x) => x,
    };
    let idx = match idx {
        Index::Reg32(x) => g.val(Value::Reg(x), 32),
        Index::Narrow64(x) => {
            let v = g.val(Value::Reg(x), 64);
            g.def(&format!("trunc <{W} x i64> {v} to <{W} x i32>"))
        }
    };
    Some(Indexed {
        base,
        idx,
        signed,
        scale,
        source,
    })
}

/// Whether index register `i` is kept as one value per block row, each
/// row's indices consecutive from it (see `Indexed::row_firsts`).
pub(crate) fn row_indexable<const W: u32>(g: &Gen<W>, i: Reg) -> bool {
    g.reg_bits[i.0 as usize] == 32 && g.row_reg(i.0 as usize).is_some_and(|l| l.stride == 1)
}

/// The 32-bit register whose lanes index an element of `size` bytes at
/// `[addr]`, when `index_form` finds that form (nothing emitted).
pub(crate) fn index_register<const W: u32>(
    g: &Gen<W>,
    addr: &Address,
    space: Space,
    size: u32,
) -> Option<Reg> {
    match index_parts(g, addr, space)? {
        (_, Index::Reg32(x), _, scale) if scale == size => Some(x),
        _ => None,
    }
}

/// `index_form`'s match: the base, the index, whether it is signed and
/// the scale.
fn index_parts<const W: u32>(
    g: &Gen<W>,
    addr: &Address,
    space: Space,
) -> Option<(Value, Index, bool, u32)> {
    if !matches!(space, Space::Global | Space::Generic | Space::Shared) {
        return None;
    }
    let AddrBase::Reg(r) = addr.base else {
        return None;
    };
    let p = g.p;
    let insts = &p.func.blocks[*p.order.get(g.cur_id as usize)?].insts;
    let end = g.cur_inst;
    // Only for the access being lowered (`cur_inst` is its position).
    let here = match insts.get(end).map(|i| &i.kind) {
        Some(
            InstKind::Ld { addr: a, .. }
            | InstKind::St { addr: a, .. }
            | InstKind::Atom { addr: a, .. },
        ) => a == addr,
        _ => false,
    };
    if !here {
        return None;
    }
    let def = crate::lower::quiet_def(insts, end, r)?;
    let (base, (idx, signed, scale)) = match &def.kind {
        InstKind::Int {
            op: IntOp::Add,
            ty: Ty::S64 | Ty::U64 | Ty::B64,
            args,
            ..
        } => {
            let [a, b] = args[..] else { return None };
            let (u, t) = if uniform64(g, a) { (a, b) } else { (b, a) };
            let Value::Reg(t) = t else { return None };
            if !uniform64(g, u) || g.lanes[t.0 as usize].is_some() {
                return None;
            }
            (u, offset_form(g, insts, end, t)?)
        }
        InstKind::Int {
            op: IntOp::MadWide,
            ty,
            args,
            ..
        } if uniform64(g, args[2]) => (args[2], wide_product(*ty, &args[..2])?),
        _ => return None,
    };
    Some((base, idx, signed, scale))
}

/// `mul.wide` of a 32-bit register by a constant (`args` either way
/// round): the register, whether it is signed, the constant.
pub(crate) fn wide_index(ty: Ty, args: &[Value]) -> Option<(Reg, bool, u32)> {
    match wide_product(ty, args)? {
        (Index::Reg32(x), signed, c) => Some((x, signed, c)),
        _ => None,
    }
}

/// `mul.wide`/`mad.wide` of a 32-bit register by a constant: the index,
/// whether it is signed, the constant.
fn wide_product(ty: Ty, args: &[Value]) -> Option<(Index, bool, u32)> {
    if !matches!(ty, Ty::S32 | Ty::U32) {
        return None;
    }
    match args[..2] {
        [Value::Reg(x), Value::Imm(s)] | [Value::Imm(s), Value::Reg(x)] => {
            Some((Index::Reg32(x), ty == Ty::S32, u32::try_from(s).ok()?))
        }
        _ => None,
    }
}

/// The 64-bit offset register `t` (at instruction `end`) as a 32-bit
/// index times a constant.
fn offset_form<const W: u32>(
    g: &Gen<W>,
    insts: &[Inst],
    end: usize,
    t: Reg,
) -> Option<(Index, bool, u32)> {
    let def = crate::lower::quiet_def(insts, end, t)?;
    let (index, signed, scale) = match &def.kind {
        InstKind::Int {
            op: IntOp::MulWide,
            ty,
            args,
            ..
        } => wide_product(*ty, args)?,
        InstKind::Int {
            op: IntOp::Shl,
            ty: Ty::B64 | Ty::U64 | Ty::S64,
            args,
            ..
        } => match args[..] {
            [Value::Reg(x), Value::Imm(c)] if c < 24 => {
                let (index, signed) = widened(g, insts, end, x)?;
                (index, signed, 1 << c)
            }
            _ => return None,
        },
        _ => {
            let (index, signed) = widened(g, insts, end, t)?;
            (index, signed, 1)
        }
    };
    let ok = match index {
        Index::Reg32(x) | Index::Narrow64(x) => g.float_reg[x.0 as usize].is_none(),
    };
    ok.then_some((index, signed, scale))
}

/// The 64-bit register `x` (at instruction `end`) as a 32-bit index,
/// extended: a `cvt` of a 32-bit register, a zero-extending load of at
/// most 32 bits, or an `and` with a constant below 2^32.
fn widened<const W: u32>(g: &Gen<W>, insts: &[Inst], end: usize, x: Reg) -> Option<(Index, bool)> {
    if g.reg_bits[x.0 as usize] != 64 {
        return None;
    }
    let def = crate::lower::quiet_def(insts, end, x)?;
    match &def.kind {
        InstKind::Cvt {
            dst_ty: Ty::S64 | Ty::U64,
            src_ty: src_ty @ (Ty::S32 | Ty::U32),
            src: Value::Reg(y),
            ..
        } if g.reg_bits[y.0 as usize] == 32 => Some((Index::Reg32(*y), *src_ty == Ty::S32)),
        InstKind::Ld {
            ty: Ty::U8 | Ty::U16 | Ty::U32,
            dsts,
            ..
        } if dsts[..] == [Some(x)] => Some((Index::Narrow64(x), false)),
        // A mask below 2^32 (`(u64)k & 252`: a bin's byte offset).
        InstKind::Int {
            op: IntOp::And,
            ty: Ty::B64 | Ty::U64 | Ty::S64,
            args,
            ..
        } => match args[..] {
            [Value::Reg(_), Value::Imm(m)] | [Value::Imm(m), Value::Reg(_)]
                if m <= u64::from(u32::MAX) =>
            {
                Some((Index::Narrow64(x), false))
            }
            _ => None,
        },
        _ => None,
    }
}

/// An index that wraps round an array of `n` elements: `a - (a < n ? 0 :
/// n)` with `a` consecutive across the lanes (`i + k * step`, then `if (col
/// >= n) col -= n`: a banded matrix's columns, a periodic boundary). Lane
/// by lane it is not affine, and testing its W indices for consecutive
/// ones costs vector instructions at every access; but the lanes whose
/// `a` reaches `n` are a suffix of the warp, so in every warp but the one
/// where the suffix starts the indices are consecutive from lane 0's,
/// which scalar code works out (see `Indexed::consecutive_wrapped`). PTX from NVRTC: `setp.lt.s32 p, a, n;
/// selp.b32 o, 0, n, p; sub.s32 x, a, o` (or `setp.ge` and `selp o, n,
/// 0, p`), in the access's block, with nothing changing the operands
/// before the access.
struct Wrapped {
    a: Reg,
    n: Value,
    /// Whether the comparison with `n` is signed.
    signed: bool,
}

/// `x` (the index of the access being lowered) as a `Wrapped` index.
fn wrapped<const W: u32>(g: &Gen<W>, x: Reg) -> Option<Wrapped> {
    let p = g.p;
    let insts = &p.func.blocks[*p.order.get(g.cur_id as usize)?].insts;
    let end = g.cur_inst.min(insts.len());
    let def = |r: Reg| crate::lower::quiet_def(insts, end, r).map(|i| &i.kind);
    let word = |t: &Ty| matches!(t, Ty::S32 | Ty::U32 | Ty::B32);
    let InstKind::Int {
        op: IntOp::Sub,
        ty,
        args,
        ..
    } = def(x)?
    else {
        return None;
    };
    let [Value::Reg(a), Value::Reg(o)] = args[..] else {
        return None;
    };
    let InstKind::Selp {
        ty: sty,
        a: sa,
        b: sb,
        c: Value::Reg(pr),
        ..
    } = def(o)?
    else {
        return None;
    };
    let InstKind::Setp {
        cmp,
        ty: cty,
        dst,
        a: ca,
        b: cb,
        combine: None,
        ..
    } = def(*pr)?
    else {
        return None;
    };
    if !word(ty) || !word(sty) || !word(cty) || dst != pr || *ca != Value::Reg(a) {
        return None;
    }
    let n = *cb;
    // The predicate holds where `a` stays (below `n`: 0 is taken away) or
    // where it wraps (`n` is).
    let (stays, signed) = match (cmp, cty) {
        (CmpOp::Lt, Ty::S32) => (true, true),
        (CmpOp::Lt, _) | (CmpOp::Lo, _) => (true, false),
        (CmpOp::Ge, Ty::S32) => (false, true),
        (CmpOp::Ge, _) | (CmpOp::Hs, _) => (false, false),
        _ => return None,
    };
    let picks = if stays {
        [Value::Imm(0), n]
    } else {
        [n, Value::Imm(0)]
    };
    let same = |v: &Value, w: &Value| match (v, w) {
        (Value::Imm(x), Value::Imm(y)) => (*x as u32) == (*y as u32),
        _ => v == w,
    };
    if !same(sa, &picks[0]) || !same(sb, &picks[1]) {
        return None;
    }
    (crate::lower::consecutive_index(g, Value::Reg(a)) && crate::lower::uniform_int32(g, n))
        .then_some(Wrapped { a, n, signed })
}

/// A 64-bit operand the same for every lane whose scalar is in `%rN`.
fn uniform64<const W: u32>(g: &Gen<W>, v: Value) -> bool {
    match v {
        Value::Imm(_) => true,
        Value::Reg(r) => {
            let i = r.0 as usize;
            g.is_uniform(i) && g.reg_bits[i] == 64 && g.float_reg[i].is_none()
        }
    }
}

impl Indexed {
    /// Lane 0's address and whether the lanes of `exec` (every lane, for a
    /// wrapped index) reach consecutive elements from it: their indices are lane 0's plus the lane, and
    /// adding 31 to lane 0's does not wrap (else consecutive 32-bit
    /// indices can widen to addresses 2^32 elements apart).
    pub(crate) fn consecutive<const W: u32>(&self, g: &mut Gen<W>, exec: &str) -> (String, String) {
        if let Some(w) = wrapped(g, self.source) {
            return self.consecutive_wrapped(g, &w);
        }
        let i0 = g.def(&format!("extractelement <{W} x i32> {}, i32 0", self.idx));
        let s0 = g.splat("i32", &i0);
        let expect = g.def(&format!("add <{W} x i32> {s0}, {}", iota::<W>(32)));
        let eq = g.def(&format!("icmp eq <{W} x i32> {}, {expect}", self.idx));
        let all = g.holds_in(&eq, exec);
        let room = self.room(g, &i0, W);
        let both = g.def(&format!("and i1 {all}, {room}"));
        (self.address_of(g, &i0), both)
    }

    /// `consecutive` for indices `a - (a < n ? 0 : n)` (see `Wrapped`),
    /// from lane 0's `a` and `n` alone: the lanes are consecutive from
    /// `a` when every lane's `a` is below `n`, from `a - n` when none is
    /// (then only the widening may break them, as `room` tests). A warp
    /// with lanes on both sides takes the slow path.
    fn consecutive_wrapped<const W: u32>(&self, g: &mut Gen<W>, w: &Wrapped) -> (String, String) {
        crate::emit::WRAPPED_INDICES.with(|c| c.set(c.get() + 1));
        let a0 = crate::lower::lane0_i32(g, Value::Reg(w.a));
        let n = crate::lower::lane0_i32(g, w.n);
        // With lane 0's `a` at most 2^31 - W, no lane's passes 2^31 - 1
        // (see `lower::consecutive_index`), and lane i's is below `n`
        // exactly when i < n - a0, in 64 bits.
        let low = g.def(&format!("icmp ule i32 {a0}, {}", (1u32 << 31) - W));
        let ext = extension(w.signed);
        let (a64, n64) = (
            g.def(&format!("zext i32 {a0} to i64")),
            g.def(&format!("{ext} i32 {n} to i64")),
        );
        let d = g.def(&format!("sub i64 {n64}, {a64}"));
        let below = g.def(&format!("icmp sge i64 {d}, {W}"));
        let above = g.def(&format!("icmp sle i64 {d}, 0"));
        let moved = g.def(&format!("sub i32 {a0}, {n}"));
        let i0 = g.def(&format!("select i1 {below}, i32 {a0}, i32 {moved}"));
        let one_side = g.def(&format!("or i1 {below}, {above}"));
        let room = self.room(g, &i0, W);
        let fits = g.def(&format!("and i1 {low}, {room}"));
        let both = g.def(&format!("and i1 {one_side}, {fits}"));
        (self.address_of(g, &i0), both)
    }

    /// How the indices widen to 64 bits.
    fn ext(&self) -> &'static str {
        extension(self.signed)
    }

    /// How to read each lane's index again in scalar code, if a load in
    /// this block before the access (`g.cur_inst`) read them from global
    /// memory at a constant stride, with only pure instructions since,
    /// none of which changes the load's address registers, and nothing
    /// but this access's address reads what it loaded (see `Replay`).
    pub(crate) fn replay<const W: u32>(&self, g: &mut Gen<W>) -> Option<Replay> {
        let p = g.p;
        let insts = &p.func.blocks[*p.order.get(g.cur_id as usize)?].insts;
        let end = g.cur_inst.min(insts.len());
        let k = (0..end)
            .rev()
            .find(|&k| crate::uniform::defs(&insts[k].kind).contains(&self.source))?;
        let load = &insts[k];
        let InstKind::Ld {
            space: Space::Global,
            ty,
            dsts,
            addr,
            volatile: false,
        } = &load.kind
        else {
            return None;
        };
        if load.guard.is_some() || dsts[..] != [Some(self.source)] {
            return None;
        }
        // Zero-extended narrow values, or all 32 bits of a 32-bit index.
        let bits = match ty {
            Ty::U8 => 8,
            Ty::U16 => 16,
            Ty::U32 | Ty::S32 | Ty::B32 => 32,
            _ => return None,
        };
        let ops = crate::uniform::uses(load);
        let quiet = insts[k + 1..end].iter().all(|j| {
            crate::lanes::pure(&j.kind)
                && crate::uniform::defs(&j.kind)
                    .iter()
                    .all(|d| !ops.contains(d))
        });
        if !quiet || !only_addressing(p, g.cur_id as usize, k, end, self.source) {
            return None;
        }
        let (h0, l, jump) = crate::lower::affine_host_addr(g, addr, Space::Global)?;
        (l.extra == 0).then_some(Replay {
            h0,
            stride: l.stride,
            bits,
            jump,
        })
    }

    /// Each block row's first index (`i32`s) and whether every row's
    /// indices then count up from it with no wrap, when the indices come
    /// from a register kept as one scalar per row, consecutive in each
    /// row (see `Gen::rows`): `a[row * k + tx]` with `k` a parameter, in a
    /// 16 x 16 block. The test is one scalar comparison a row.
    pub(crate) fn row_firsts<const W: u32>(&self, g: &mut Gen<W>) -> (Vec<String>, String) {
        let w = g.row_width;
        let t = format!("<{} x i32>", W / w);
        let firsts = g.row_values(self.source.0 as usize, 32);
        let mut room = "true".to_string();
        let mut out = Vec::new();
        for row in 0..W / w {
            let i = g.def(&format!("extractelement {t} {firsts}, i32 {row}"));
            let fits = self.room(g, &i, w);
            room = g.def(&format!("and i1 {room}, {fits}"));
            out.push(i);
        }
        (out, room)
    }

    /// Whether `n` consecutive indices from `i` (an `i32`) do not wrap, so
    /// that they extend to consecutive addresses.
    fn room<const W: u32>(&self, g: &mut Gen<W>, i: &str, n: u32) -> String {
        // (The unsigned bound written as the i32 of its bits.)
        let (pred, top) = if self.signed {
            ("sle", i32::MAX - (n as i32 - 1))
        } else {
            ("ule", (u32::MAX - (n - 1)) as i32)
        };
        g.def(&format!("icmp {pred} i32 {i}, {top}"))
    }

    /// The lanes' indices (`<W x i32>`).
    pub(crate) fn indices(&self) -> &str {
        &self.idx
    }

    /// The address of the element of index `i` (an `i32`).
    pub(crate) fn address_of<const W: u32>(&self, g: &mut Gen<W>, i: &str) -> String {
        let w = g.def(&format!("{} i32 {i} to i64", self.ext()));
        let o = g.def(&format!("mul i64 {w}, {}", self.scale));
        g.def(&format!("add i64 {}, {o}", self.base))
    }

    /// Every lane's address (`<W x i64>`).
    pub(crate) fn addresses<const W: u32>(&self, g: &mut Gen<W>) -> String {
        let w = g.def(&format!(
            "{} <{W} x i32> {} to <{W} x i64>",
            self.ext(),
            self.idx
        ));
        let o = g.def(&format!(
            "mul <{W} x i64> {w}, {}",
            crate::emit::sc::<W>(64, u64::from(self.scale))
        ));
        let b = g.splat("i64", &self.base);
        g.def(&format!("add <{W} x i64> {b}, {o}"))
    }

    /// The elements of the lanes of `exec` through the out-of-line slow
    /// load, its 64-bit addresses formed there (less code in line).
    pub(crate) fn slow_load<const W: u32>(&self, g: &mut Gen<W>, bits: u32, exec: &str) -> String {
        g.slow_index_loads.insert((bits, self.signed));
        g.slow_loads.insert(bits);
        g.def(&format!(
            "call <{W} x i{bits}> @wf_ld_slowix_{bits}_{}(i64 {}, <{W} x i32> {}, <{W} x i1> {exec})",
            self.signed, self.base, self.idx
        ))
    }
}

/// `@wf_ld_slowix_{bits}_{signed}(base, idx, exec)`: `@wf_ld_slow_{bits}`
/// of the addresses `base + ext(idx) * (bits / 8)`.
pub(crate) fn slow_load_fn<const W: u32>(bits: u32, signed: bool) -> String {
    let ext = extension(signed);
    let size = crate::emit::sc::<W>(64, u64::from(bits / 8));
    format!(
        "define internal <{W} x i{bits}> @wf_ld_slowix_{bits}_{signed}(i64 %base, <{W} x i32> %idx, <{W} x i1> %exec) noinline #0 {{
entry:
  %w = {ext} <{W} x i32> %idx to <{W} x i64>
  %o = mul <{W} x i64> %w, {size}
  %b0 = insertelement <{W} x i64> undef, i64 %base, i32 0
  %b = shufflevector <{W} x i64> %b0, <{W} x i64> undef, <{W} x i32> zeroinitializer
  %h = add <{W} x i64> %b, %o
  %v = call <{W} x i{bits}> @wf_ld_slow_{bits}(<{W} x i64> %h, <{W} x i1> %exec)
  ret <{W} x i{bits}> %v
}}
"
    )
}

/// Whether the value that instruction `load` of block `id` loads into
/// `source` reaches nothing but the address of the access at `end`
/// (through the instructions between them). The index read again then stands in for
/// the load: memory that other threads may write meanwhile (a relaxed
/// load, a race) could give the two reads different values, and a guard
/// or operand computed from the first must not meet an address made from
/// the second.
fn only_addressing(
    p: &crate::prepare::Prepared,
    id: usize,
    load: usize,
    end: usize,
    source: Reg,
) -> bool {
    let insts = &p.func.blocks[p.order[id]].insts;
    let mut derived = vec![source];
    for j in &insts[load + 1..end] {
        if crate::uniform::uses(j).iter().any(|r| derived.contains(r)) {
            derived.extend(crate::uniform::defs(&j.kind));
        }
    }
    let InstKind::Atom { addr, .. } = &insts[end].kind else {
        return false;
    };
    let base = match addr.base {
        AddrBase::Reg(r) => Some(r),
        _ => None,
    };
    p.order.iter().enumerate().all(|(b, bid)| {
        let block = &p.func.blocks[*bid];
        let term_ok = match &block.term {
            Some(Terminator::Branch { pred, .. }) => !derived.contains(pred),
            _ => true,
        };
        term_ok
            && block.insts.iter().enumerate().all(|(k, i)| {
                let used = crate::uniform::uses(i);
                if b == id && k > load && k < end {
                    // The chain itself (its results are in `derived`).
                    return true;
                }
                if b == id && k == end {
                    // The access: through its address only.
                    let mut rest = used;
                    if let Some(r) = base {
                        if let Some(at) = rest.iter().position(|x| *x == r) {
                            rest.remove(at);
                        }
                    }
                    return rest.iter().all(|r| !derived.contains(r));
                }
                used.iter().all(|r| !derived.contains(r))
            })
    })
}

/// The LLVM cast that widens a signed or unsigned index.
fn extension(signed: bool) -> &'static str {
    if signed {
        "sext"
    } else {
        "zext"
    }
}
