//! Accesses `p[i]` through a 32-bit index that is not affine in the lane
//! (a CSR column, a bucket, a permutation): PTX forms the address as
//! `mul.wide.s32 t, i, size; add.s64 a, p, t` (or one `mad.wide`). Whether
//! the lanes' elements are consecutive is then a test on the 32-bit
//! indices, 4 vector instructions at 32 lanes, not on 64-bit addresses
//! (widened, shifted, added and compared: 25), and the 64-bit addresses are
//! only formed where the elements are not consecutive.

use crate::emit::{iota, Emitter as Gen};
use warpfold_ir::*;

/// Lane addresses `base + ext(idx) * size`: `base` (`i64`) the same for
/// every lane, `idx` the lanes' indices (`<W x i32>`), extended as signed
/// or unsigned.
pub(crate) struct Indexed {
    base: String,
    idx: String,
    signed: bool,
}

/// The form of `[addr]` when it is an element of one array through a
/// 32-bit index for every lane, `size` bytes an element, worked out from
/// the instructions before the access in its block (only from definitions
/// whose operands nothing changes up to the access).
pub(crate) fn indexed<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    size: u32,
) -> Option<Indexed> {
    if !matches!(space, Space::Global | Space::Generic) {
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
        Some(InstKind::Ld { addr: a, .. } | InstKind::St { addr: a, .. }) => a == addr,
        _ => false,
    };
    if !here {
        return None;
    }
    let scaled = |i: &Inst| -> Option<(Reg, Ty)> {
        // `idx * size`, widened: the index register and its type.
        match &i.kind {
            InstKind::Int {
                op: IntOp::MulWide | IntOp::MadWide,
                ty: ty @ (Ty::S32 | Ty::U32),
                args,
                ..
            } => match args[..2] {
                [Value::Reg(x), Value::Imm(s)] | [Value::Imm(s), Value::Reg(x)]
                    if s == u64::from(size) =>
                {
                    Some((x, *ty))
                }
                _ => None,
            },
            _ => None,
        }
    };
    let def = crate::lower::quiet_def(insts, end, r)?;
    let (base, (idx, ty)) = match &def.kind {
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
            let m = crate::lower::quiet_def(insts, end, t)?;
            match m.kind {
                InstKind::Int {
                    op: IntOp::MulWide,
                    ..
                } => (u, scaled(m)?),
                _ => return None,
            }
        }
        InstKind::Int {
            op: IntOp::MadWide,
            args,
            ..
        } if uniform64(g, args[2]) => (args[2], scaled(def)?),
        _ => return None,
    };
    if g.reg_bits[idx.0 as usize] != 32 || g.float_reg[idx.0 as usize].is_some() {
        return None;
    }
    // For tests and readers of the generated code.
    g.line("; indexed access");
    let b = match base {
        Value::Imm(x) => x.to_string(),
        Value::Reg(u) => g.def(&format!("load i64, i64* %r{}", u.0)),
    };
    let base = g.def(&format!("add i64 {b}, {}", addr.offset));
    let idx = g.val(Value::Reg(idx), 32);
    Some(Indexed {
        base,
        idx,
        signed: ty == Ty::S32,
    })
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
    /// Lane 0's address and whether the lanes of `exec` reach consecutive
    /// elements from it: their indices are lane 0's plus the lane, and
    /// adding 31 to lane 0's does not wrap (else consecutive 32-bit
    /// indices can widen to addresses 2^32 elements apart).
    pub(crate) fn consecutive<const W: u32>(
        &self,
        g: &mut Gen<W>,
        size: u32,
        exec: &str,
    ) -> (String, String) {
        let i0 = g.def(&format!("extractelement <{W} x i32> {}, i32 0", self.idx));
        let s0 = g.splat("i32", &i0);
        let expect = g.def(&format!("add <{W} x i32> {s0}, {}", iota::<W>(32)));
        let eq = g.def(&format!("icmp eq <{W} x i32> {}, {expect}", self.idx));
        let off = g.def(&format!(
            "xor <{W} x i1> {exec}, {}",
            crate::emit::sc::<W>(1, 1)
        ));
        let ok = g.def(&format!("or <{W} x i1> {eq}, {off}"));
        let all = g.def(&format!(
            "call i1 @llvm.vector.reduce.and.v{W}i1(<{W} x i1> {ok})"
        ));
        // (The unsigned bound written as the i32 of its bits.)
        let (pred, top) = if self.signed {
            ("sle", i32::MAX - (W as i32 - 1))
        } else {
            ("ule", (u32::MAX - (W - 1)) as i32)
        };
        let room = g.def(&format!("icmp {pred} i32 {i0}, {top}"));
        let both = g.def(&format!("and i1 {all}, {room}"));
        let ext = if self.signed { "sext" } else { "zext" };
        let w0 = g.def(&format!("{ext} i32 {i0} to i64"));
        let o0 = g.def(&format!("mul i64 {w0}, {size}"));
        let h0 = g.def(&format!("add i64 {}, {o0}", self.base));
        (h0, both)
    }

    /// Every lane's address (`<W x i64>`).
    pub(crate) fn addresses<const W: u32>(&self, g: &mut Gen<W>, size: u32) -> String {
        let ext = if self.signed { "sext" } else { "zext" };
        let w = g.def(&format!("{ext} <{W} x i32> {} to <{W} x i64>", self.idx));
        let o = g.def(&format!(
            "mul <{W} x i64> {w}, {}",
            crate::emit::sc::<W>(64, u64::from(size))
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
    let ext = if signed { "sext" } else { "zext" };
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
