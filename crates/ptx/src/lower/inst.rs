//! Meaning of each PTX instruction: opcode + modifiers + operands to IR.

use super::mods::{classify, Mods};
use super::{FnLower, Terminator};
use crate::ast::{self, Operand, Span};
use crate::diag::Diagnostic;
use warpfold_ir::*;

type R<T> = Result<T, Diagnostic>;

impl FnLower<'_, '_> {
    pub(crate) fn instruction(&mut self, i: &ast::Instruction) -> R<()> {
        let guard = match &i.guard {
            None => None,
            Some((name, neg)) => match self.src(&Operand::Reg(name.clone(), i.span), Ty::Pred)? {
                Value::Reg(r) => Some((r, *neg)),
                Value::Imm(_) => {
                    return Err(self.diag(i.span, "guard must be a predicate register"))
                }
            },
        };
        let full = if i.modifiers.is_empty() {
            i.opcode.clone()
        } else {
            format!("{}.{}", i.opcode, i.modifiers.join("."))
        };
        let m = classify(&i.opcode, &i.modifiers)
            .map_err(|e| self.diag(i.opcode_span, format!("{e} in `{full}`")))?;
        let cx = Cx {
            full: &full,
            ops: &i.operands,
            span: i.span,
            opspan: i.opcode_span,
            guard,
        };
        self.dispatch(&i.opcode, m, &cx)
    }

    fn dispatch(&mut self, opcode: &str, mut m: Mods, cx: &Cx) -> R<()> {
        let g = cx.guard;
        let sp = cx.span;
        let bad = |this: &Self, e: String| this.diag(cx.opspan, format!("{e} in `{}`", cx.full));
        macro_rules! ty {
            () => {
                m.one_type().map_err(|e| bad(self, e))?
            };
        }
        macro_rules! nowords {
            () => {
                m.no_words().map_err(|e| bad(self, e))?
            };
        }
        match opcode {
            "add" | "sub" | "addc" | "subc" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 3)?;
                let sub = opcode.starts_with("sub");
                if ty.is_float() {
                    let op = if sub { FloatOp::Sub } else { FloatOp::Add };
                    return self.float(op, ty, &m, cx);
                }
                let dst = self.typed_dst(&cx.ops[0], ty)?;
                let a = self.typed_src(&cx.ops[1], ty)?;
                let b = self.typed_src(&cx.ops[2], ty)?;
                let carry_in = opcode.ends_with('c').then(|| self.carry_reg());
                if m.cc || carry_in.is_some() {
                    let carry_out = m.cc.then(|| self.carry_reg());
                    self.emit(
                        InstKind::Carry {
                            sub,
                            ty,
                            dst,
                            a,
                            b,
                            carry_in,
                            carry_out,
                        },
                        g,
                        sp,
                    );
                } else {
                    let op = match (sub, m.sat) {
                        (false, false) => IntOp::Add,
                        (true, false) => IntOp::Sub,
                        (false, true) => IntOp::AddSat,
                        (true, true) => IntOp::SubSat,
                    };
                    self.emit(
                        InstKind::Int {
                            op,
                            ty,
                            dst,
                            args: vec![a, b],
                        },
                        g,
                        sp,
                    );
                }
            }
            "mul" | "mul24" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 3)?;
                if ty.is_float() {
                    return self.float(FloatOp::Mul, ty, &m, cx);
                }
                let op = match (opcode, m.hi, m.wide) {
                    ("mul24", true, _) => IntOp::Mul24Hi,
                    ("mul24", false, _) => IntOp::Mul24Lo,
                    (_, true, _) => IntOp::MulHi,
                    (_, _, true) => IntOp::MulWide,
                    _ => IntOp::MulLo,
                };
                let dty = if op == IntOp::MulWide {
                    ty.widened()
                } else {
                    ty
                };
                self.int(op, ty, dty, cx, 2)?;
            }
            "mad" | "madc" | "mad24" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 4)?;
                if ty.is_float() {
                    return self.float(FloatOp::Fma, ty, &m, cx);
                }
                if m.cc || opcode == "madc" {
                    // mad.lo.cc / madc.hi.cc: a product half, then an add with carry.
                    let dst = self.dst(&cx.ops[0], ty)?;
                    let a = self.src(&cx.ops[1], ty)?;
                    let b = self.src(&cx.ops[2], ty)?;
                    let c = self.src(&cx.ops[3], ty)?;
                    let t = self.temp(ty);
                    let op = if m.hi { IntOp::MulHi } else { IntOp::MulLo };
                    self.emit(
                        InstKind::Int {
                            op,
                            ty,
                            dst: t,
                            args: vec![a, b],
                        },
                        g,
                        sp,
                    );
                    let carry_in = (opcode == "madc").then(|| self.carry_reg());
                    let carry_out = m.cc.then(|| self.carry_reg());
                    let k = InstKind::Carry {
                        sub: false,
                        ty,
                        dst,
                        a: Value::Reg(t),
                        b: c,
                        carry_in,
                        carry_out,
                    };
                    self.emit(k, g, sp);
                    return Ok(());
                }
                let op = match (opcode, m.hi, m.wide, m.sat) {
                    ("mad24", true, _, _) => IntOp::Mad24Hi,
                    ("mad24", false, _, _) => IntOp::Mad24Lo,
                    (_, true, _, true) => IntOp::MadHiSat,
                    (_, true, _, false) => IntOp::MadHi,
                    (_, _, true, _) => IntOp::MadWide,
                    _ => IntOp::MadLo,
                };
                let dty = if op == IntOp::MadWide {
                    ty.widened()
                } else {
                    ty
                };
                self.int(op, ty, dty, cx, 3)?;
            }
            "sad" => {
                nowords!();
                let ty = ty!();
                self.int(IntOp::Sad, ty, ty, cx, 3)?;
            }
            "div" | "rem" => {
                nowords!();
                let ty = ty!();
                if ty.is_float() && opcode == "div" {
                    let kind = self.float_kind(&m, ty, cx)?;
                    cx.count(self, 3)?;
                    return self.float(FloatOp::Div(kind), ty, &m, cx);
                }
                let op = if opcode == "div" {
                    IntOp::Div
                } else {
                    IntOp::Rem
                };
                self.int(op, ty, ty, cx, 2)?;
            }
            "abs" | "neg" => {
                nowords!();
                let ty = ty!();
                if ty.is_float() {
                    cx.count(self, 2)?;
                    let op = if opcode == "abs" {
                        FloatOp::Abs
                    } else {
                        FloatOp::Neg
                    };
                    return self.float(op, ty, &m, cx);
                }
                let op = if opcode == "abs" {
                    IntOp::Abs
                } else {
                    IntOp::Neg
                };
                self.int(op, ty, ty, cx, 1)?;
            }
            "min" | "max" => {
                m.take_word(&["relu"]).map(|_| ()).map_or(Ok(()), |_| {
                    Err(bad(self, "`.relu` is not supported".into()))
                })?;
                nowords!();
                let ty = ty!();
                if ty.is_float() {
                    cx.count(self, 3)?;
                    let op = if opcode == "min" {
                        FloatOp::Min { nan: m.nan }
                    } else {
                        FloatOp::Max { nan: m.nan }
                    };
                    return self.float(op, ty, &m, cx);
                }
                let op = if opcode == "min" {
                    IntOp::Min
                } else {
                    IntOp::Max
                };
                self.int(op, ty, ty, cx, 2)?;
            }
            "and" | "or" | "xor" | "not" | "cnot" => {
                nowords!();
                let ty = ty!();
                let unary = matches!(opcode, "not" | "cnot");
                if ty == Ty::Pred {
                    cx.count(self, if unary { 2 } else { 3 })?;
                    let op = match opcode {
                        "and" => PredOp::And,
                        "or" => PredOp::Or,
                        "xor" => PredOp::Xor,
                        "not" => PredOp::Not,
                        _ => return Err(bad(self, "`cnot` needs an integer type".into())),
                    };
                    let dst = self.dst(&cx.ops[0], ty)?;
                    let a = self.src(&cx.ops[1], ty)?;
                    let b = if unary {
                        Value::Imm(0)
                    } else {
                        self.src(&cx.ops[2], ty)?
                    };
                    self.emit(InstKind::PredOp { op, dst, a, b }, g, sp);
                    return Ok(());
                }
                let op = match opcode {
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "not" => IntOp::Not,
                    _ => IntOp::CNot,
                };
                self.int(op, ty, ty, cx, if unary { 1 } else { 2 })?;
            }
            "shl" | "shr" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 3)?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], Ty::U32)?;
                let op = if opcode == "shl" {
                    IntOp::Shl
                } else {
                    IntOp::Shr
                };
                self.emit(
                    InstKind::Int {
                        op,
                        ty,
                        dst,
                        args: vec![a, b],
                    },
                    g,
                    sp,
                );
            }
            "popc" | "clz" | "brev" | "bfind" => {
                let shiftamt = m.take_word(&["shiftamt"]).is_some();
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                let op = match opcode {
                    "popc" => IntOp::Popc,
                    "clz" => IntOp::Clz,
                    "brev" => IntOp::Brev,
                    _ => IntOp::Bfind { shiftamt },
                };
                let dty = if opcode == "brev" { ty } else { Ty::U32 };
                let dst = self.dst(&cx.ops[0], dty)?;
                let a = self.src(&cx.ops[1], ty)?;
                self.emit(
                    InstKind::Int {
                        op,
                        ty,
                        dst,
                        args: vec![a],
                    },
                    g,
                    sp,
                );
            }
            "bfe" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 4)?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], Ty::U32)?;
                let c = self.src(&cx.ops[3], Ty::U32)?;
                self.emit(
                    InstKind::Int {
                        op: IntOp::Bfe,
                        ty,
                        dst,
                        args: vec![a, b, c],
                    },
                    g,
                    sp,
                );
            }
            "bfi" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 5)?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], ty)?;
                let c = self.src(&cx.ops[3], Ty::U32)?;
                let d = self.src(&cx.ops[4], Ty::U32)?;
                self.emit(
                    InstKind::Int {
                        op: IntOp::Bfi,
                        ty,
                        dst,
                        args: vec![a, b, c, d],
                    },
                    g,
                    sp,
                );
            }
            "prmt" => {
                let mode = match m
                    .take_word(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
                    .as_deref()
                {
                    None => PrmtMode::Default,
                    Some("f4e") => PrmtMode::F4e,
                    Some("b4e") => PrmtMode::B4e,
                    Some("rc8") => PrmtMode::Rc8,
                    Some("ecl") => PrmtMode::Ecl,
                    Some("ecr") => PrmtMode::Ecr,
                    _ => PrmtMode::Rc16,
                };
                nowords!();
                let ty = ty!();
                self.int(IntOp::Prmt(mode), ty, ty, cx, 3)?;
            }
            "shf" => {
                let dir = m.take_word(&["l", "r"]);
                let clamp = match m.take_word(&["wrap", "clamp"]).as_deref() {
                    Some("clamp") => true,
                    Some(_) => false,
                    None => return Err(bad(self, "expected `.wrap` or `.clamp`".into())),
                };
                nowords!();
                let ty = ty!();
                let Some(dir) = dir else {
                    return Err(bad(self, "expected `.l` or `.r`".into()));
                };
                self.int(
                    IntOp::Shf {
                        left: dir == "l",
                        clamp,
                    },
                    ty,
                    ty,
                    cx,
                    3,
                )?;
            }
            "lop3" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 5)?;
                let lut = match &cx.ops[4] {
                    Operand::Int(v, _) if (0..=255).contains(v) => *v as u8,
                    other => {
                        return Err(
                            self.diag(other.span(), "lop3 needs an immediate truth table 0..255")
                        )
                    }
                };
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], ty)?;
                let c = self.src(&cx.ops[3], ty)?;
                self.emit(
                    InstKind::Int {
                        op: IntOp::Lop3(lut),
                        ty,
                        dst,
                        args: vec![a, b, c],
                    },
                    g,
                    sp,
                );
            }
            "dp4a" | "dp2a" => {
                let hi = match m.take_word(&["hi"]) {
                    Some(_) => true,
                    None => m.hi,
                };
                nowords!();
                if m.types.len() != 2 {
                    return Err(bad(self, "expected two types".into()));
                }
                let (a_signed, b_signed) = (m.types[0].is_signed(), m.types[1].is_signed());
                let op = if opcode == "dp4a" {
                    IntOp::Dp4a { a_signed, b_signed }
                } else {
                    IntOp::Dp2a {
                        a_signed,
                        b_signed,
                        hi,
                    }
                };
                let ty = if a_signed || b_signed {
                    Ty::S32
                } else {
                    Ty::U32
                };
                self.int(op, ty, ty, cx, 3)?;
            }
            "fma" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 4)?;
                if !ty.is_float() {
                    return Err(bad(self, "fma needs a float type".into()));
                }
                self.float(FloatOp::Fma, ty, &m, cx)?;
            }
            "sqrt" | "rcp" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                let kind = self.float_kind(&m, ty, cx)?;
                let op = if opcode == "sqrt" {
                    FloatOp::Sqrt(kind)
                } else {
                    FloatOp::Rcp(kind)
                };
                self.float(op, ty, &m, cx)?;
            }
            "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                if !m.approx {
                    return Err(bad(self, "expected `.approx`".into()));
                }
                let op = match opcode {
                    "rsqrt" => FloatOp::Rsqrt,
                    "ex2" => FloatOp::Ex2,
                    "lg2" => FloatOp::Lg2,
                    "sin" => FloatOp::Sin,
                    "cos" => FloatOp::Cos,
                    _ => FloatOp::Tanh,
                };
                self.float(op, ty, &m, cx)?;
            }
            "copysign" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 3)?;
                self.float(FloatOp::Copysign, ty, &m, cx)?;
            }
            "testp" => {
                let kind = match m
                    .take_word(&[
                        "finite",
                        "infinite",
                        "number",
                        "notanumber",
                        "normal",
                        "subnormal",
                    ])
                    .as_deref()
                {
                    Some("finite") => TestKind::Finite,
                    Some("infinite") => TestKind::Infinite,
                    Some("number") => TestKind::Number,
                    Some("notanumber") => TestKind::NotANumber,
                    Some("normal") => TestKind::Normal,
                    Some("subnormal") => TestKind::Subnormal,
                    _ => return Err(bad(self, "expected a test such as `.finite`".into())),
                };
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                let dst = self.dst(&cx.ops[0], Ty::Pred)?;
                let a = self.src(&cx.ops[1], ty)?;
                self.emit(InstKind::Testp { kind, ty, dst, a }, g, sp);
            }
            "setp" => {
                nowords!();
                let ty = ty!();
                let Some(cmp) = m.cmp else {
                    return Err(bad(self, "missing comparison".into()));
                };
                if cx.ops.len() != 3 && cx.ops.len() != 4 {
                    return Err(cx.wrong_count(self, "3 or 4"));
                }
                let (dst, dst2) = match &cx.ops[0] {
                    Operand::Pair(a, b, _) => {
                        (self.dst(a, Ty::Pred)?, Some(self.dst(b, Ty::Pred)?))
                    }
                    other => (self.dst(other, Ty::Pred)?, None),
                };
                let a = self.typed_src(&cx.ops[1], ty)?;
                let b = self.typed_src(&cx.ops[2], ty)?;
                let combine = self.combine(&m, cx, 3)?;
                self.emit(
                    InstKind::Setp {
                        cmp,
                        ty,
                        dst,
                        dst2,
                        a,
                        b,
                        combine,
                        ftz: m.ftz,
                    },
                    g,
                    sp,
                );
            }
            "set" => {
                nowords!();
                let Some(cmp) = m.cmp else {
                    return Err(bad(self, "missing comparison".into()));
                };
                let [dst_ty, ty] = m.types[..] else {
                    return Err(bad(self, "expected destination and source types".into()));
                };
                if cx.ops.len() != 3 && cx.ops.len() != 4 {
                    return Err(cx.wrong_count(self, "3 or 4"));
                }
                let dst = self.dst(&cx.ops[0], dst_ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], ty)?;
                let combine = self.combine(&m, cx, 3)?;
                self.emit(
                    InstKind::Set {
                        cmp,
                        ty,
                        dst_ty,
                        dst,
                        a,
                        b,
                        combine,
                        ftz: m.ftz,
                    },
                    g,
                    sp,
                );
            }
            "selp" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 4)?;
                let dst = self.typed_dst(&cx.ops[0], ty)?;
                let a = self.typed_src(&cx.ops[1], ty)?;
                let b = self.typed_src(&cx.ops[2], ty)?;
                let c = self.src(&cx.ops[3], Ty::Pred)?;
                self.emit(InstKind::Selp { ty, dst, a, b, c }, g, sp);
            }
            "slct" => {
                nowords!();
                let [ty, cty] = m.types[..] else {
                    return Err(bad(self, "expected two types".into()));
                };
                cx.count(self, 4)?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], ty)?;
                let c = self.src(&cx.ops[3], cty)?;
                self.emit(
                    InstKind::Slct {
                        ty,
                        cty,
                        dst,
                        a,
                        b,
                        c,
                        ftz: m.ftz,
                    },
                    g,
                    sp,
                );
            }
            "mov" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                self.mov(ty, cx)?;
            }
            "ld" | "ldu" | "st" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                let space = m.space.unwrap_or(Space::Generic);
                let n = m.vec.unwrap_or(1) as usize;
                if opcode == "st" {
                    let (addr, space) = self.address(&cx.ops[0], space)?;
                    let srcs = self.vector_srcs(&cx.ops[1], ty, n)?;
                    self.emit(
                        InstKind::St {
                            space,
                            ty,
                            srcs,
                            addr,
                            volatile: m.volatile,
                        },
                        g,
                        sp,
                    );
                } else {
                    let (addr, space) = self.address(&cx.ops[1], space)?;
                    let dsts = self.vector_dsts(&cx.ops[0], ty, n)?;
                    self.emit(
                        InstKind::Ld {
                            space,
                            ty,
                            dsts,
                            addr,
                            volatile: m.volatile,
                        },
                        g,
                        sp,
                    );
                }
            }
            "cvt" => {
                nowords!();
                let [dst_ty, src_ty] = m.types[..] else {
                    return Err(bad(self, "expected destination and source types".into()));
                };
                let round = match (m.round, m.round_int, m.rna) {
                    (Some(r), None, false) => Some(CvtRound::Float(r)),
                    (None, Some(r), false) => Some(CvtRound::Int(r)),
                    (None, None, true) => Some(CvtRound::NearestAway),
                    (None, None, false) => None,
                    _ => return Err(bad(self, "conflicting rounding modifiers".into())),
                };
                if matches!(dst_ty, Ty::F16x2 | Ty::BF16x2) {
                    // cvt.rn.f16x2.f32 d, a, b: a to the upper half, b to the lower.
                    cx.count(self, 3)?;
                    let half = if dst_ty == Ty::F16x2 {
                        Ty::F16
                    } else {
                        Ty::BF16
                    };
                    let dst = self.dst(&cx.ops[0], dst_ty)?;
                    let a = self.src(&cx.ops[1], src_ty)?;
                    let b = self.src(&cx.ops[2], src_ty)?;
                    let (ta, tb) = (self.temp(half), self.temp(half));
                    for (t, v) in [(ta, a), (tb, b)] {
                        let k = InstKind::Cvt {
                            dst_ty: half,
                            src_ty,
                            dst: t,
                            src: v,
                            round,
                            ftz: m.ftz,
                            sat: m.sat,
                        };
                        self.emit(k, g, sp);
                    }
                    let k = InstKind::Pack {
                        ty: Ty::B32,
                        dst,
                        parts: vec![Value::Reg(tb), Value::Reg(ta)],
                        part_bits: 16,
                    };
                    self.emit(k, g, sp);
                    return Ok(());
                }
                cx.count(self, 2)?;
                if src_ty.is_float()
                    && dst_ty.is_int()
                    && round.is_some()
                    && !matches!(round, Some(CvtRound::Int(_)))
                {
                    return Err(bad(self, "float-to-integer conversion needs an integer rounding (`.rni .rzi .rmi .rpi`)".into()));
                }
                let dst = self.dst(&cx.ops[0], dst_ty)?;
                let src = self.src(&cx.ops[1], src_ty)?;
                self.emit(
                    InstKind::Cvt {
                        dst_ty,
                        src_ty,
                        dst,
                        src,
                        round,
                        ftz: m.ftz,
                        sat: m.sat,
                    },
                    g,
                    sp,
                );
            }
            "cvta" => {
                nowords!();
                let ty = ty!();
                cx.count(self, 2)?;
                let Some(space) = m.space else {
                    return Err(bad(self, "missing state space".into()));
                };
                let dst = self.dst(&cx.ops[0], ty)?;
                let src = self.src(&cx.ops[1], ty)?;
                self.emit(
                    InstKind::Cvta {
                        to_generic: !m.to,
                        space,
                        dst,
                        src,
                        bits: ty.bits(),
                    },
                    g,
                    sp,
                );
            }
            "bra" | "brx" => {
                if opcode == "brx" {
                    return Err(bad(
                        self,
                        "indirect branches (`brx.idx`) are not supported".into(),
                    ));
                }
                nowords!();
                cx.count(self, 1)?;
                self.branch_to(&cx.ops[0], g)?;
            }
            "ret" => {
                nowords!();
                let t = if self.f.is_kernel {
                    Terminator::Exit
                } else {
                    Terminator::Return
                };
                self.leave(t, g);
            }
            "exit" => {
                nowords!();
                self.leave(Terminator::Exit, g);
            }
            "call" => {
                nowords!();
                self.call(cx)?;
            }
            "bar" | "barrier" => self.barrier(m, cx)?,
            "membar" | "fence" => {
                self.emit(InstKind::Fence, g, sp);
            }
            "atom" | "red" => self.atom(opcode == "red", m, cx)?,
            "shfl" => {
                let mode = match m.take_word(&["up", "down", "bfly", "idx"]).as_deref() {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some("idx") => ShflMode::Idx,
                    _ => {
                        return Err(bad(
                            self,
                            "expected a shuffle mode (`.up .down .bfly .idx`)".into(),
                        ))
                    }
                };
                nowords!();
                let ty = ty!();
                let sync = cx.full.contains(".sync");
                cx.count(self, if sync { 5 } else { 4 })?;
                let (dst, pred_dst) = match &cx.ops[0] {
                    Operand::Pair(a, b, _) => (self.dst(a, ty)?, Some(self.dst(b, Ty::Pred)?)),
                    other => (self.dst(other, ty)?, None),
                };
                let a = self.src(&cx.ops[1], ty)?;
                let b = self.src(&cx.ops[2], Ty::U32)?;
                let c = self.src(&cx.ops[3], Ty::U32)?;
                let mask = if sync {
                    self.src(&cx.ops[4], Ty::U32)?
                } else {
                    Value::Imm(0xffff_ffff)
                };
                self.emit(
                    InstKind::Shfl {
                        mode,
                        dst,
                        pred_dst,
                        a,
                        b,
                        c,
                        mask,
                    },
                    g,
                    sp,
                );
            }
            "vote" => {
                let mode = match m.take_word(&["all", "any", "uni", "ballot"]).as_deref() {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some("ballot") => VoteMode::Ballot,
                    _ => return Err(bad(self, "expected `.all .any .uni .ballot`".into())),
                };
                nowords!();
                let ty = ty!();
                let sync = cx.full.contains(".sync");
                cx.count(self, if sync { 3 } else { 2 })?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let (a, negate) = self.pred_src(&cx.ops[1])?;
                let mask = if sync {
                    self.src(&cx.ops[2], Ty::U32)?
                } else {
                    Value::Imm(0xffff_ffff)
                };
                self.emit(
                    InstKind::Vote {
                        mode,
                        dst,
                        a,
                        negate,
                        mask,
                    },
                    g,
                    sp,
                );
            }
            "activemask" => {
                nowords!();
                cx.count(self, 1)?;
                let dst = self.dst(&cx.ops[0], Ty::B32)?;
                self.emit(InstKind::Activemask { dst }, g, sp);
            }
            "match" => {
                let all = match m.take_word(&["any", "all"]).as_deref() {
                    Some("all") => true,
                    Some(_) => false,
                    None => return Err(bad(self, "expected `.any` or `.all`".into())),
                };
                nowords!();
                let ty = ty!();
                cx.count(self, 3)?;
                let (dst, pred_dst) = match &cx.ops[0] {
                    Operand::Pair(a, b, _) => (self.dst(a, Ty::B32)?, Some(self.dst(b, Ty::Pred)?)),
                    other => (self.dst(other, Ty::B32)?, None),
                };
                let a = self.src(&cx.ops[1], ty)?;
                let mask = self.src(&cx.ops[2], Ty::U32)?;
                self.emit(
                    InstKind::Match {
                        all,
                        ty,
                        dst,
                        pred_dst,
                        a,
                        mask,
                    },
                    g,
                    sp,
                );
            }
            "redux" => {
                let op = match m
                    .take_word(&["add", "min", "max", "and", "or", "xor"])
                    .as_deref()
                {
                    Some("add") => ReduxOp::Add,
                    Some("min") => ReduxOp::Min,
                    Some("max") => ReduxOp::Max,
                    Some("and") => ReduxOp::And,
                    Some("or") => ReduxOp::Or,
                    Some("xor") => ReduxOp::Xor,
                    _ => return Err(bad(self, "expected a reduction operation".into())),
                };
                nowords!();
                let ty = ty!();
                if ty.is_float() {
                    return Err(bad(self, "float redux is not supported".into()));
                }
                cx.count(self, 3)?;
                let dst = self.dst(&cx.ops[0], ty)?;
                let a = self.src(&cx.ops[1], ty)?;
                let mask = self.src(&cx.ops[2], Ty::U32)?;
                self.emit(
                    InstKind::Redux {
                        op,
                        ty,
                        dst,
                        a,
                        mask,
                    },
                    g,
                    sp,
                );
            }
            "isspacep" => {
                nowords!();
                cx.count(self, 2)?;
                let Some(space) = m.space else {
                    return Err(bad(self, "missing state space".into()));
                };
                let dst = self.dst(&cx.ops[0], Ty::Pred)?;
                let src = self.src(&cx.ops[1], Ty::U64)?;
                self.emit(InstKind::IsSpace { space, dst, src }, g, sp);
            }
            "trap" | "brkpt" => self.emit(InstKind::Trap, g, sp),
            "nanosleep" | "pmevent" | "prefetch" | "prefetchu" | "discard" | "applypriority" => {
                self.emit(InstKind::Nop, g, sp)
            }
            _ => {
                return Err(self
                    .diag(cx.opspan, format!("unsupported instruction `{}`", cx.full))
                    .expected("an instruction warpfold implements"))
            }
        }
        Ok(())
    }

    /// Integer op with `n` sources of type `ty` (shift/position operands of
    /// bfe/bfi are handled by their own arms).
    fn int(&mut self, op: IntOp, ty: Ty, dty: Ty, cx: &Cx, n: usize) -> R<()> {
        cx.count(self, n + 1)?;
        let dst = self.typed_dst(&cx.ops[0], dty)?;
        let mut args = Vec::with_capacity(n);
        for (k, o) in cx.ops[1..].iter().enumerate() {
            // The addend of a wide mad is itself wide.
            let t = if matches!(op, IntOp::MadWide) && k == 2 {
                ty.widened()
            } else {
                ty
            };
            args.push(self.typed_src(o, t)?);
        }
        self.emit(InstKind::Int { op, ty, dst, args }, cx.guard, cx.span);
        Ok(())
    }

    fn float(&mut self, op: FloatOp, ty: Ty, m: &Mods, cx: &Cx) -> R<()> {
        let n = warpfold_ir::verify::float_arity(op);
        cx.count(self, n + 1)?;
        let dst = self.typed_dst(&cx.ops[0], ty)?;
        let mut args = Vec::with_capacity(n);
        for o in &cx.ops[1..] {
            args.push(self.typed_src(o, ty)?);
        }
        let round = m.round.unwrap_or(Round::Nearest);
        if m.round.is_none() && matches!(op, FloatOp::Add | FloatOp::Sub | FloatOp::Mul) {
            let at = self.f.blocks[self.cur].insts.len();
            self.implicit.insert((self.cur, at));
        }
        self.emit(
            InstKind::Float {
                op,
                ty,
                dst,
                args,
                round,
                ftz: m.ftz,
                sat: m.sat,
            },
            cx.guard,
            cx.span,
        );
        Ok(())
    }

    fn float_kind(&self, m: &Mods, ty: Ty, cx: &Cx) -> R<FloatKind> {
        Ok(match (m.approx, m.full, m.round) {
            (true, false, None) => FloatKind::Approx,
            (false, true, None) => FloatKind::Full,
            (false, false, Some(r)) => FloatKind::Rounded(r),
            (false, false, None) if ty == Ty::F32 => FloatKind::Rounded(Round::Nearest),
            _ => {
                return Err(self.diag(
                    cx.opspan,
                    format!(
                        "expected one of `.approx .full .rn .rz .rm .rp` in `{}`",
                        cx.full
                    ),
                ))
            }
        })
    }

    fn combine(&mut self, m: &Mods, cx: &Cx, at: usize) -> R<Option<(BoolOp, Value, bool)>> {
        match (m.boolop, cx.ops.get(at)) {
            (None, None) => Ok(None),
            (Some(op), Some(c)) => {
                let (v, neg) = self.pred_src(c)?;
                Ok(Some((op, v, neg)))
            }
            (Some(_), None) => Err(self.diag(cx.span, "missing the predicate to combine with")),
            (None, Some(c)) => {
                Err(self.diag(c.span(), "a fourth operand needs `.and`, `.or` or `.xor`"))
            }
        }
    }

    fn mov(&mut self, ty: Ty, cx: &Cx) -> R<()> {
        let (g, sp) = (cx.guard, cx.span);
        match (&cx.ops[0], &cx.ops[1]) {
            (Operand::Vector(parts, _), src) => {
                let part_bits = ty.bits() / parts.len().max(1) as u32;
                if parts.len() < 2 || !ty.bits().is_multiple_of(parts.len() as u32) || part_bits < 8
                {
                    return Err(self.diag(cx.ops[0].span(), "vector does not split this type"));
                }
                let pty = Ty::uint(part_bits);
                let mut dsts = Vec::new();
                for p in parts {
                    dsts.push(match p {
                        Operand::Sink(_) => None,
                        other => Some(self.dst(other, pty)?),
                    });
                }
                let src = self.src(src, ty)?;
                self.emit(
                    InstKind::Unpack {
                        ty,
                        dsts,
                        src,
                        part_bits,
                    },
                    g,
                    sp,
                );
            }
            (dst, Operand::Vector(parts, vspan)) => {
                let part_bits = ty.bits() / parts.len().max(1) as u32;
                if parts.len() < 2 || !ty.bits().is_multiple_of(parts.len() as u32) || part_bits < 8
                {
                    return Err(self.diag(*vspan, "vector does not pack into this type"));
                }
                let pty = Ty::uint(part_bits);
                let mut vals = Vec::new();
                for p in parts {
                    vals.push(self.src(p, pty)?);
                }
                let dst = self.dst(dst, ty)?;
                self.emit(
                    InstKind::Pack {
                        ty,
                        dst,
                        parts: vals,
                        part_bits,
                    },
                    g,
                    sp,
                );
            }
            (dst, src) => {
                let dst = self.dst(dst, ty)?;
                if let Operand::Reg(name, _) = src {
                    if let Some(s) = super::special(name) {
                        if self.lookup(name).is_none() {
                            self.emit(InstKind::ReadSpecial { dst, sreg: s }, g, sp);
                            return Ok(());
                        }
                    }
                }
                let src = self.src(src, ty)?;
                self.emit(InstKind::Mov { ty, dst, src }, g, sp);
            }
        }
        Ok(())
    }

    fn vector_dsts(&mut self, op: &Operand, ty: Ty, n: usize) -> R<Vec<Option<Reg>>> {
        match (op, n) {
            (Operand::Vector(parts, span), n) => {
                if parts.len() != n {
                    return Err(self.diag(*span, format!("expected {n} registers")));
                }
                let mut out = Vec::new();
                for p in parts {
                    out.push(match p {
                        Operand::Sink(_) => None,
                        other => Some(self.dst(other, ty)?),
                    });
                }
                Ok(out)
            }
            (other, 1) => Ok(vec![Some(self.dst(other, ty)?)]),
            (other, n) => {
                Err(self.diag(other.span(), format!("expected a vector of {n} registers")))
            }
        }
    }

    fn vector_srcs(&mut self, op: &Operand, ty: Ty, n: usize) -> R<Vec<Value>> {
        match (op, n) {
            (Operand::Vector(parts, span), n) => {
                if parts.len() != n {
                    return Err(self.diag(*span, format!("expected {n} values")));
                }
                let mut out = Vec::new();
                for p in parts {
                    out.push(self.src(p, ty)?);
                }
                Ok(out)
            }
            (other, 1) => Ok(vec![self.src(other, ty)?]),
            (other, n) => Err(self.diag(other.span(), format!("expected a vector of {n} values"))),
        }
    }

    fn call_arg(&mut self, op: &Operand) -> R<CallArg> {
        match op {
            Operand::Int(v, _) => Ok(CallArg::Imm(*v as u64)),
            Operand::Reg(name, span) | Operand::Symbol(name, span) => match self.lookup(name) {
                Some(super::Binding::Reg(r)) => Ok(CallArg::Reg(r)),
                Some(super::Binding::Local(l)) => Ok(CallArg::Local(l)),
                Some(_) => Err(self.diag(
                    *span,
                    format!("`{name}` cannot be a call argument; declare a `.param` variable"),
                )),
                None => Err(self.diag(*span, format!("unknown name `{name}`"))),
            },
            Operand::Sink(span) => Err(self.diag(*span, "`_` as a call argument is not supported")),
            other => Err(self.diag(other.span(), "bad call argument")),
        }
    }

    fn call(&mut self, cx: &Cx) -> R<()> {
        let ops = cx.ops;
        // call (rets), f, (args) [, prototype]   |   call f, (args)   |   call f
        let (rets, rest) = match ops.first() {
            Some(Operand::List(r, _)) => (r.as_slice(), &ops[1..]),
            _ => (&[][..], ops),
        };
        let Some(target) = rest.first() else {
            return Err(self
                .diag(cx.span, "call needs a function")
                .expected("a function name"));
        };
        let args: &[Operand] = match rest.get(1) {
            Some(Operand::List(a, _)) => a,
            None => &[],
            Some(other) => return Err(self.diag(other.span(), "expected `(arguments)`")),
        };
        let indirect = match target {
            Operand::Reg(..) => true,
            Operand::Symbol(n, _) => self
                .lookup(n)
                .is_some_and(|b| matches!(b, super::Binding::Reg(_))),
            _ => false,
        };
        if indirect {
            // call (rets), %rd, (args), prototype: the callee is checked when it runs.
            let target = self.src(target, Ty::U64)?;
            let mut a = Vec::new();
            for o in args {
                a.push(self.call_arg(o)?);
            }
            let mut r = Vec::new();
            for o in rets {
                r.push(self.call_arg(o)?);
            }
            self.emit(
                InstKind::CallIndirect {
                    target,
                    args: a,
                    rets: r,
                },
                cx.guard,
                cx.span,
            );
            return Ok(());
        }
        let (name, fspan) = match target {
            Operand::Symbol(n, s) => (n.clone(), *s),
            other => return Err(self.diag(other.span(), "expected a function name")),
        };
        if rest.len() > 3 {
            return Err(self.diag(rest[3].span(), "too many call operands"));
        }
        if self.ml.declared.contains(&name) && !self.ml.funcs.contains_key(&name) {
            if let Some(which) = Builtin::from_name(&name) {
                let (na, nr) = which.arity();
                if args.len() != na || rets.len() > nr {
                    return Err(self.diag(
                        fspan,
                        format!("`{name}` takes {na} arguments and returns {nr} value(s)"),
                    ));
                }
                let mut a = Vec::new();
                for o in args {
                    a.push(self.call_arg(o)?);
                }
                let mut r = Vec::new();
                for o in rets {
                    r.push(self.call_arg(o)?);
                }
                self.emit(
                    InstKind::Builtin {
                        which,
                        args: a,
                        rets: r,
                    },
                    cx.guard,
                    cx.span,
                );
                return Ok(());
            }
        }
        let func = self.function_id(&name, fspan)?;
        let (np, nr) = self.ml.arity.get(&func).copied().unwrap_or((0, 0));
        if np != args.len() || nr != rets.len() {
            return Err(self.diag(
                fspan,
                format!("`{name}` takes {np} arguments and returns {nr} values; this call passes {} and expects {}", args.len(), rets.len()),
            ));
        }
        let mut a = Vec::new();
        for o in args {
            a.push(self.call_arg(o)?);
        }
        let mut r = Vec::new();
        for o in rets {
            let arg = self.call_arg(o)?;
            if let CallArg::Imm(_) = arg {
                return Err(self.diag(
                    o.span(),
                    "a return value needs a register or `.param` variable",
                ));
            }
            r.push(arg);
        }
        self.emit(
            InstKind::Call {
                func,
                args: a,
                rets: r,
            },
            cx.guard,
            cx.span,
        );
        Ok(())
    }

    fn barrier(&mut self, mut m: Mods, cx: &Cx) -> R<()> {
        let (g, sp) = (cx.guard, cx.span);
        let word = m.take_word(&["sync", "arrive", "red", "warp"]);
        // `sync` is classified as ignorable, so a bare `bar.sync` arrives here
        // without a word; `bar`/`barrier` alone also mean sync.
        let is_arrive = word.as_deref() == Some("arrive");
        let is_red = word.as_deref() == Some("red");
        if word.as_deref() == Some("warp") {
            cx.count(self, 1)?;
            let mask = self.src(&cx.ops[0], Ty::U32)?;
            self.emit(InstKind::WarpSync { mask }, g, sp);
            return Ok(());
        }
        if is_red {
            let op = match m.take_word(&["popc", "and", "or"]).as_deref() {
                Some("popc") => BarRed::Popc,
                Some("and") => BarRed::And,
                Some("or") => BarRed::Or,
                _ => return Err(self.diag(cx.opspan, "expected `.popc`, `.and` or `.or`")),
            };
            m.no_words().map_err(|e| self.diag(cx.opspan, e))?;
            let ty = m.one_type().map_err(|e| self.diag(cx.opspan, e))?;
            if cx.ops.len() != 3 && cx.ops.len() != 4 {
                return Err(cx.wrong_count(self, "3 or 4"));
            }
            let dst = self.dst(&cx.ops[0], ty)?;
            let id = self.src(&cx.ops[1], Ty::U32)?;
            let count = if cx.ops.len() == 4 {
                Some(self.src(&cx.ops[2], Ty::U32)?)
            } else {
                None
            };
            let (p, neg) = self.pred_src(&cx.ops[cx.ops.len() - 1])?;
            self.emit(
                InstKind::Bar {
                    kind: BarKind::Red(op),
                    id,
                    count,
                    dst: Some(dst),
                    pred: Some((p, neg)),
                },
                g,
                sp,
            );
            return Ok(());
        }
        m.no_words()
            .map_err(|e| self.diag(cx.opspan, format!("{e} in `{}`", cx.full)))?;
        if cx.ops.is_empty() || cx.ops.len() > 2 {
            return Err(cx.wrong_count(self, "1 or 2"));
        }
        let id = self.src(&cx.ops[0], Ty::U32)?;
        let count = match cx.ops.get(1) {
            Some(o) => Some(self.src(o, Ty::U32)?),
            None => None,
        };
        let kind = if is_arrive {
            BarKind::Arrive
        } else {
            BarKind::Sync
        };
        self.emit(
            InstKind::Bar {
                kind,
                id,
                count,
                dst: None,
                pred: None,
            },
            g,
            sp,
        );
        Ok(())
    }

    fn atom(&mut self, red: bool, mut m: Mods, cx: &Cx) -> R<()> {
        let op = match m
            .take_word(&[
                "add", "inc", "dec", "min", "max", "and", "or", "xor", "exch", "cas",
            ])
            .as_deref()
        {
            Some("add") => AtomOp::Add,
            Some("inc") => AtomOp::Inc,
            Some("dec") => AtomOp::Dec,
            Some("min") => AtomOp::Min,
            Some("max") => AtomOp::Max,
            Some("and") => AtomOp::And,
            Some("or") => AtomOp::Or,
            Some("xor") => AtomOp::Xor,
            Some("exch") => AtomOp::Exch,
            Some("cas") => AtomOp::Cas,
            _ => {
                return Err(self.diag(
                    cx.opspan,
                    format!("expected an atomic operation in `{}`", cx.full),
                ))
            }
        };
        m.no_words()
            .map_err(|e| self.diag(cx.opspan, format!("{e} in `{}`", cx.full)))?;
        let ty = m.one_type().map_err(|e| self.diag(cx.opspan, e))?;
        if m.vec.is_some() {
            return Err(self.diag(cx.opspan, "vector atomics are not supported"));
        }
        let space = m.space.unwrap_or(Space::Generic);
        if !matches!(space, Space::Generic | Space::Global | Space::Shared) {
            return Err(self.diag(
                cx.opspan,
                "atomics work on global, shared or generic addresses",
            ));
        }
        let ok_ty = match op {
            AtomOp::Add => matches!(
                ty,
                Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64 | Ty::F32 | Ty::F64
            ),
            AtomOp::Inc | AtomOp::Dec => matches!(ty, Ty::U32),
            AtomOp::Min | AtomOp::Max => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
            AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(
                ty,
                Ty::B32 | Ty::B64 | Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64
            ),
            AtomOp::Exch | AtomOp::Cas => matches!(
                ty,
                Ty::B16
                    | Ty::B32
                    | Ty::B64
                    | Ty::U32
                    | Ty::S32
                    | Ty::U64
                    | Ty::S64
                    | Ty::F32
                    | Ty::F64
            ),
        };
        if !ok_ty {
            return Err(self.diag(
                cx.opspan,
                format!("`{}` is not supported for this type", cx.full),
            ));
        }
        let cas = op == AtomOp::Cas;
        let (dst, rest) = if red {
            cx.count(self, 2)?;
            (None, cx.ops)
        } else {
            cx.count(self, if cas { 4 } else { 3 })?;
            (Some(self.dst(&cx.ops[0], ty)?), &cx.ops[1..])
        };
        let (addr, space) = self.address(&rest[0], space)?;
        let a = self.src(&rest[1], ty)?;
        let b = if cas {
            Some(self.src(&rest[2], ty)?)
        } else {
            None
        };
        self.emit(
            InstKind::Atom {
                space,
                op,
                ty,
                dst,
                addr,
                a,
                b,
            },
            cx.guard,
            cx.span,
        );
        Ok(())
    }
}

/// What every instruction lowering needs to know about its instruction.
pub(crate) struct Cx<'a> {
    full: &'a str,
    ops: &'a [Operand],
    span: Span,
    opspan: Span,
    guard: Option<(Reg, bool)>,
}

impl Cx<'_> {
    fn count(&self, fl: &FnLower, n: usize) -> R<()> {
        if self.ops.len() == n {
            Ok(())
        } else {
            Err(self.wrong_count(fl, &n.to_string()))
        }
    }

    fn wrong_count(&self, fl: &FnLower, n: &str) -> Diagnostic {
        fl.diag(
            self.span,
            format!(
                "`{}` takes {n} operands, found {}",
                self.full,
                self.ops.len()
            ),
        )
    }
}
