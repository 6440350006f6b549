//! Structural checks of a module: every handle points into its arena, every
//! block ends in a terminator, operand counts fit the operation, calls match
//! their callee. The front end runs it after lowering; a failure is a bug in
//! warpfold, reported as an error rather than a crash later.

use crate::entity::{BlockId, Reg};
use crate::inst::*;
use crate::module::{Function, Module};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("IR verifier: function `{function}`, block {block}: {message}")]
pub struct VerifyError {
    pub function: String,
    pub block: String,
    pub message: String,
}

pub fn verify_module(m: &Module) -> Result<(), VerifyError> {
    for (_, f) in m.functions.iter() {
        verify_function(m, f)?;
    }
    Ok(())
}

/// How many source operands an integer operation takes.
pub fn int_arity(op: IntOp) -> usize {
    use IntOp::*;
    match op {
        Abs | Neg | Not | CNot | Popc | Clz | Brev | Bfind { .. } => 1,
        Add | Sub | AddSat | SubSat | MulLo | MulHi | MulWide | Mul24Lo | Mul24Hi | Div | Rem
        | Min | Max | And | Or | Xor | Shl | Shr => 2,
        MadLo
        | MadHi
        | MadHiSat
        | MadWide
        | Mad24Lo
        | Mad24Hi
        | Sad
        | Bfe
        | Prmt(_)
        | Shf { .. }
        | Lop3(_)
        | Dp4a { .. }
        | Dp2a { .. } => 3,
        Bfi => 4,
    }
}

pub fn float_arity(op: FloatOp) -> usize {
    use FloatOp::*;
    match op {
        Sqrt(_) | Rcp(_) | Rsqrt | Ex2 | Lg2 | Sin | Cos | Tanh | Abs | Neg => 1,
        Add | Sub | Mul | Div(_) | Min { .. } | Max { .. } | Copysign => 2,
        Fma => 3,
    }
}

/// Collect the registers of call arguments; false if a local is out of range.
fn call_args_ok<'a>(
    f: &Function,
    list: impl Iterator<Item = &'a CallArg>,
    regs: &mut Vec<Reg>,
) -> bool {
    for a in list {
        match a {
            CallArg::Reg(r) => regs.push(*r),
            CallArg::Imm(_) => {}
            CallArg::Local(l) => {
                if !f.locals.contains(*l) {
                    return false;
                }
            }
        }
    }
    true
}

fn verify_function(m: &Module, f: &Function) -> Result<(), VerifyError> {
    let mut block = String::from("-");
    let err = |block: &str, message: String| VerifyError {
        function: f.name.clone(),
        block: block.to_string(),
        message,
    };
    if f.blocks.is_empty() {
        return Err(err(&block, "function has no blocks".into()));
    }
    if !f.blocks.contains(f.entry) {
        return Err(err(&block, "entry block out of range".into()));
    }
    let reg_ok = |r: Reg| f.regs.contains(r);
    let val_ok = |v: &Value| match v {
        Value::Reg(r) => reg_ok(*r),
        Value::Imm(_) => true,
    };
    let blk_ok = |b: BlockId| f.blocks.contains(b);
    let sym_ok = |s: &Symbol| match s {
        Symbol::Global(g) => m.globals.contains(*g),
        Symbol::Local(l) => f.locals.contains(*l),
        Symbol::KernelParam(i) => f.is_kernel && (*i as usize) < f.params.len(),
        Symbol::Function(id) => m.functions.get(*id).is_some_and(|g| !g.is_kernel),
    };
    let addr_ok = |a: &Address| match &a.base {
        AddrBase::Reg(r) => reg_ok(*r),
        AddrBase::Symbol(s) => sym_ok(s),
        AddrBase::None => true,
    };
    for (bid, b) in f.blocks.iter() {
        block = bid.to_string();
        for inst in &b.insts {
            let bad = |what: &str| {
                err(
                    &block,
                    format!("{what} in `{}`", crate::print::print_inst(m, f, inst)),
                )
            };
            if let Some((g, _)) = inst.guard {
                if !reg_ok(g) {
                    return Err(bad("guard register out of range"));
                }
            }
            let mut regs: Vec<Reg> = Vec::new();
            let mut vals: Vec<Value> = Vec::new();
            match &inst.kind {
                InstKind::Mov { dst, src, .. } => {
                    regs.push(*dst);
                    vals.push(*src);
                }
                InstKind::AddrOf { dst, sym, .. } => {
                    regs.push(*dst);
                    if !sym_ok(sym) {
                        return Err(bad("symbol out of range"));
                    }
                }
                InstKind::Int { op, dst, args, .. } => {
                    if args.len() != int_arity(*op) {
                        return Err(bad("wrong operand count"));
                    }
                    regs.push(*dst);
                    vals.extend(args);
                }
                InstKind::Carry {
                    dst,
                    a,
                    b,
                    carry_in,
                    carry_out,
                    ..
                } => {
                    regs.push(*dst);
                    regs.extend(carry_in.iter().chain(carry_out.iter()));
                    vals.extend([a, b]);
                }
                InstKind::Float { op, dst, args, .. } => {
                    if args.len() != float_arity(*op) {
                        return Err(bad("wrong operand count"));
                    }
                    regs.push(*dst);
                    vals.extend(args);
                }
                InstKind::Setp {
                    dst,
                    dst2,
                    a,
                    b,
                    combine,
                    ..
                } => {
                    regs.push(*dst);
                    regs.extend(dst2.iter());
                    vals.extend([a, b]);
                    vals.extend(combine.iter().map(|c| c.1));
                }
                InstKind::Set {
                    dst, a, b, combine, ..
                } => {
                    regs.push(*dst);
                    vals.extend([a, b]);
                    vals.extend(combine.iter().map(|c| c.1));
                }
                InstKind::Selp { dst, a, b, c, .. } | InstKind::Slct { dst, a, b, c, .. } => {
                    regs.push(*dst);
                    vals.extend([a, b, c]);
                }
                InstKind::PredOp { dst, a, b, .. } => {
                    regs.push(*dst);
                    vals.extend([a, b]);
                }
                InstKind::Testp { dst, a, .. }
                | InstKind::IsSpace { dst, src: a, .. }
                | InstKind::Cvt { dst, src: a, .. }
                | InstKind::Cvta { dst, src: a, .. } => {
                    regs.push(*dst);
                    vals.push(*a);
                }
                InstKind::Pack { dst, parts, .. } => {
                    regs.push(*dst);
                    vals.extend(parts);
                }
                InstKind::Unpack { dsts, src, .. } => {
                    regs.extend(dsts.iter().flatten());
                    vals.push(*src);
                }
                InstKind::Ld { dsts, addr, .. } => {
                    if dsts.is_empty() || dsts.len() > 8 {
                        return Err(bad("bad vector width"));
                    }
                    regs.extend(dsts.iter().flatten());
                    if !addr_ok(addr) {
                        return Err(bad("address out of range"));
                    }
                }
                InstKind::St { srcs, addr, .. } => {
                    if srcs.is_empty() || srcs.len() > 8 {
                        return Err(bad("bad vector width"));
                    }
                    vals.extend(srcs);
                    if !addr_ok(addr) {
                        return Err(bad("address out of range"));
                    }
                }
                InstKind::Atom {
                    op,
                    dst,
                    addr,
                    a,
                    b,
                    ..
                } => {
                    regs.extend(dst.iter());
                    vals.push(*a);
                    vals.extend(b.iter());
                    if (*op == AtomOp::Cas) != b.is_some() {
                        return Err(bad("cas needs exactly two operands"));
                    }
                    if !addr_ok(addr) {
                        return Err(bad("address out of range"));
                    }
                }
                InstKind::Bar {
                    id,
                    count,
                    dst,
                    pred,
                    ..
                } => {
                    regs.extend(dst.iter());
                    vals.push(*id);
                    vals.extend(count.iter());
                    vals.extend(pred.iter().map(|p| p.0));
                }
                InstKind::Fence | InstKind::Trap | InstKind::Nop => {}
                InstKind::Shfl {
                    dst,
                    pred_dst,
                    a,
                    b,
                    c,
                    mask,
                    ..
                } => {
                    regs.push(*dst);
                    regs.extend(pred_dst.iter());
                    vals.extend([a, b, c, mask]);
                }
                InstKind::Vote { dst, a, mask, .. } => {
                    regs.push(*dst);
                    vals.extend([a, mask]);
                }
                InstKind::Activemask { dst } | InstKind::ReadSpecial { dst, .. } => regs.push(*dst),
                InstKind::Match {
                    dst,
                    pred_dst,
                    a,
                    mask,
                    ..
                } => {
                    regs.push(*dst);
                    regs.extend(pred_dst.iter());
                    vals.extend([a, mask]);
                }
                InstKind::Redux { dst, a, mask, .. } => {
                    regs.push(*dst);
                    vals.extend([a, mask]);
                }
                InstKind::WarpSync { mask } => vals.push(*mask),
                InstKind::CallIndirect { target, args, rets } => {
                    vals.push(*target);
                    if !call_args_ok(f, args.iter().chain(rets), &mut regs) {
                        return Err(bad("local out of range"));
                    }
                }
                InstKind::Builtin { which, args, rets } => {
                    let (na, nr) = which.arity();
                    if args.len() != na || rets.len() > nr {
                        return Err(bad("argument count does not match the builtin"));
                    }
                    if !call_args_ok(f, args.iter().chain(rets), &mut regs) {
                        return Err(bad("local out of range"));
                    }
                }
                InstKind::Call { func, args, rets } => {
                    let Some(callee) = m.functions.get(*func) else {
                        return Err(bad("callee out of range"));
                    };
                    if callee.is_kernel {
                        return Err(bad("call of a kernel"));
                    }
                    if callee.params.len() != args.len() || callee.returns.len() != rets.len() {
                        return Err(bad("argument count does not match the callee"));
                    }
                    if !call_args_ok(f, args.iter().chain(rets), &mut regs) {
                        return Err(bad("local out of range"));
                    }
                }
            }
            if !regs.iter().all(|r| reg_ok(*r)) || !vals.iter().all(val_ok) {
                return Err(bad("register out of range"));
            }
        }
        match &b.term {
            None => return Err(err(&block, "block has no terminator".into())),
            Some(Terminator::Jump(t)) => {
                if !blk_ok(*t) {
                    return Err(err(&block, "jump target out of range".into()));
                }
            }
            Some(Terminator::Branch {
                pred, then, els, ..
            }) => {
                if !reg_ok(*pred) || !blk_ok(*then) || !blk_ok(*els) {
                    return Err(err(&block, "branch operand out of range".into()));
                }
            }
            Some(Terminator::Return) | Some(Terminator::Exit) => {}
        }
    }
    Ok(())
}
