//! Textual form of the IR (`warpfold inspect --emit ir`). One instruction
//! per line, registers as `v<N>` with their PTX names in a header comment.

use crate::inst::*;
use crate::module::{Function, Module, ParamBinding};
use crate::types::Space;
use std::fmt::Write;

pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "; ptx {}.{} target {}",
        m.ptx_version.0, m.ptx_version.1, m.target
    );
    for (id, g) in m.globals.iter() {
        let _ = writeln!(
            out,
            "{id} = {} {} size {} align {}{}{}",
            g.space,
            g.name,
            g.size,
            g.align,
            if g.dynamic { " dynamic" } else { "" },
            if g.space == Space::Shared || g.space == Space::Const {
                format!(" offset {}", g.offset)
            } else {
                String::new()
            }
        );
    }
    for (id, f) in m.functions.iter() {
        out.push('\n');
        out.push_str(&print_function(m, id, f));
    }
    out
}

fn value(v: &Value) -> String {
    match v {
        Value::Reg(r) => r.to_string(),
        Value::Imm(x) => format!("{:#x}", x),
    }
}

fn values(vs: &[Value]) -> String {
    vs.iter().map(value).collect::<Vec<_>>().join(", ")
}

fn opt_regs(rs: &[Option<crate::entity::Reg>]) -> String {
    rs.iter()
        .map(|r| r.map(|r| r.to_string()).unwrap_or_else(|| "_".into()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn symbol(m: &Module, f: &Function, s: &Symbol) -> String {
    match s {
        Symbol::Global(g) => format!(
            "@{}",
            m.globals.get(*g).map(|g| g.name.as_str()).unwrap_or("?")
        ),
        Symbol::Local(l) => format!(
            "%{}",
            f.locals.get(*l).map(|l| l.name.as_str()).unwrap_or("?")
        ),
        Symbol::KernelParam(i) => format!("param{}", i),
        Symbol::Function(id) => format!(
            "&{}",
            m.functions.get(*id).map(|f| f.name.as_str()).unwrap_or("?")
        ),
    }
}

fn address(m: &Module, f: &Function, a: &Address) -> String {
    let base = match &a.base {
        AddrBase::Reg(r) => r.to_string(),
        AddrBase::Symbol(s) => symbol(m, f, s),
        AddrBase::None => String::new(),
    };
    if a.offset == 0 {
        format!("[{base}]")
    } else if base.is_empty() {
        format!("[{:#x}]", a.offset)
    } else {
        format!("[{base}{:+}]", a.offset)
    }
}

fn combine(c: &Option<(BoolOp, Value, bool)>) -> String {
    match c {
        None => String::new(),
        Some((op, v, neg)) => {
            format!(" {:?} {}{}", op, if *neg { "!" } else { "" }, value(v)).to_lowercase()
        }
    }
}

/// Call arguments or results as text.
fn call_args(f: &Function, list: &[CallArg]) -> String {
    list.iter()
        .map(|a| match a {
            CallArg::Reg(r) => r.to_string(),
            CallArg::Imm(x) => format!("{x:#x}"),
            CallArg::Local(l) => format!(
                "%{}",
                f.locals.get(*l).map(|l| l.name.as_str()).unwrap_or("?")
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn print_inst(m: &Module, f: &Function, inst: &Inst) -> String {
    let mut s = String::new();
    if let Some((r, neg)) = inst.guard {
        let _ = write!(s, "@{}{} ", if neg { "!" } else { "" }, r);
    }
    let flags = |ftz: bool, sat: bool| {
        format!(
            "{}{}",
            if ftz { ".ftz" } else { "" },
            if sat { ".sat" } else { "" }
        )
    };
    let body = match &inst.kind {
        InstKind::Mov { ty, dst, src } => format!("{dst} = mov.{ty} {}", value(src)),
        InstKind::AddrOf { dst, sym, space } => {
            format!("{dst} = addr.{space} {}", symbol(m, f, sym))
        }
        InstKind::Int { op, ty, dst, args } => format!(
            "{dst} = {}.{ty} {}",
            format!("{op:?}").to_lowercase(),
            values(args)
        ),
        InstKind::Carry {
            sub,
            ty,
            dst,
            a,
            b,
            carry_in,
            carry_out,
        } => format!(
            "{dst} = {}{}.{ty} {}, {}{}{}",
            if *sub { "sub" } else { "add" },
            if carry_out.is_some() { ".cc" } else { "" },
            value(a),
            value(b),
            carry_in
                .map(|c| format!(", carry_in {c}"))
                .unwrap_or_default(),
            carry_out
                .map(|c| format!(", carry_out {c}"))
                .unwrap_or_default()
        ),
        InstKind::Float {
            op,
            ty,
            dst,
            args,
            round,
            ftz,
            sat,
        } => {
            let r = if matches!(
                op,
                FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma
            ) {
                format!(".{}", round.name())
            } else {
                String::new()
            };
            format!(
                "{dst} = {}{r}{}.{ty} {}",
                format!("{op:?}").to_lowercase(),
                flags(*ftz, *sat),
                values(args)
            )
        }
        InstKind::Setp {
            cmp,
            ty,
            dst,
            dst2,
            a,
            b,
            combine: c,
            ftz,
        } => format!(
            "{dst}{} = setp.{}{}.{ty} {}, {}{}",
            dst2.map(|d| format!("|{d}")).unwrap_or_default(),
            format!("{cmp:?}").to_lowercase(),
            flags(*ftz, false),
            value(a),
            value(b),
            combine(c)
        ),
        InstKind::Set {
            cmp,
            ty,
            dst_ty,
            dst,
            a,
            b,
            combine: c,
            ftz,
        } => format!(
            "{dst} = set.{}{}.{dst_ty}.{ty} {}, {}{}",
            format!("{cmp:?}").to_lowercase(),
            flags(*ftz, false),
            value(a),
            value(b),
            combine(c)
        ),
        InstKind::Selp { ty, dst, a, b, c } => {
            format!("{dst} = selp.{ty} {}, {}, {}", value(a), value(b), value(c))
        }
        InstKind::Slct {
            ty,
            cty,
            dst,
            a,
            b,
            c,
            ftz,
        } => {
            format!(
                "{dst} = slct{}.{ty}.{cty} {}, {}, {}",
                flags(*ftz, false),
                value(a),
                value(b),
                value(c)
            )
        }
        InstKind::PredOp { op, dst, a, b } => format!(
            "{dst} = {}.pred {}, {}",
            format!("{op:?}").to_lowercase(),
            value(a),
            value(b)
        ),
        InstKind::Testp { kind, ty, dst, a } => format!(
            "{dst} = testp.{}.{ty} {}",
            format!("{kind:?}").to_lowercase(),
            value(a)
        ),
        InstKind::Cvt {
            dst_ty,
            src_ty,
            dst,
            src,
            round,
            ftz,
            sat,
        } => format!(
            "{dst} = cvt{}{}.{dst_ty}.{src_ty} {}",
            match round {
                None => String::new(),
                Some(CvtRound::Float(r)) => format!(".{}", r.name()),
                Some(CvtRound::Int(r)) => format!(".{}i", r.name()),
                Some(CvtRound::NearestAway) => ".rna".into(),
            },
            flags(*ftz, *sat),
            value(src)
        ),
        InstKind::IsSpace { space, dst, src } => format!("{dst} = isspacep.{space} {}", value(src)),
        InstKind::Cvta {
            to_generic,
            space,
            dst,
            src,
            bits,
        } => {
            format!(
                "{dst} = cvta{}.{space}.u{bits} {}",
                if *to_generic { "" } else { ".to" },
                value(src)
            )
        }
        InstKind::Pack { ty, dst, parts, .. } => format!("{dst} = pack.{ty} {{{}}}", values(parts)),
        InstKind::Unpack { ty, dsts, src, .. } => {
            format!("{{{}}} = unpack.{ty} {}", opt_regs(dsts), value(src))
        }
        InstKind::Ld {
            space,
            ty,
            dsts,
            addr,
            volatile,
        } => format!(
            "{{{}}} = ld{}.{space}.{ty} {}",
            opt_regs(dsts),
            if *volatile { ".volatile" } else { "" },
            address(m, f, addr)
        ),
        InstKind::St {
            space,
            ty,
            srcs,
            addr,
            volatile,
        } => format!(
            "st{}.{space}.{ty} {}, {{{}}}",
            if *volatile { ".volatile" } else { "" },
            address(m, f, addr),
            values(srcs)
        ),
        InstKind::Atom {
            space,
            op,
            ty,
            dst,
            addr,
            a,
            b,
        } => format!(
            "{} = atom.{space}.{}.{ty} {}, {}{}",
            dst.map(|d| d.to_string()).unwrap_or_else(|| "_".into()),
            format!("{op:?}").to_lowercase(),
            address(m, f, addr),
            value(a),
            b.map(|b| format!(", {}", value(&b))).unwrap_or_default()
        ),
        InstKind::Bar {
            kind,
            id,
            count,
            dst,
            pred,
        } => format!(
            "{}bar.{} {}{}{}",
            dst.map(|d| format!("{d} = ")).unwrap_or_default(),
            format!("{kind:?}").to_lowercase(),
            value(id),
            count
                .map(|c| format!(", {}", value(&c)))
                .unwrap_or_default(),
            pred.map(|(p, n)| format!(", {}{}", if n { "!" } else { "" }, value(&p)))
                .unwrap_or_default()
        ),
        InstKind::Fence => "fence".into(),
        InstKind::Shfl {
            mode,
            dst,
            pred_dst,
            a,
            b,
            c,
            mask,
        } => format!(
            "{dst}{} = shfl.sync.{}.b32 {}, {}, {}, {}",
            pred_dst.map(|p| format!("|{p}")).unwrap_or_default(),
            format!("{mode:?}").to_lowercase(),
            value(a),
            value(b),
            value(c),
            value(mask)
        ),
        InstKind::Vote {
            mode,
            dst,
            a,
            negate,
            mask,
        } => format!(
            "{dst} = vote.sync.{} {}{}, {}",
            format!("{mode:?}").to_lowercase(),
            if *negate { "!" } else { "" },
            value(a),
            value(mask)
        ),
        InstKind::Activemask { dst } => format!("{dst} = activemask"),
        InstKind::Match {
            all,
            ty,
            dst,
            pred_dst,
            a,
            mask,
        } => format!(
            "{dst}{} = match.{}.sync.{ty} {}, {}",
            pred_dst.map(|p| format!("|{p}")).unwrap_or_default(),
            if *all { "all" } else { "any" },
            value(a),
            value(mask)
        ),
        InstKind::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => {
            format!(
                "{dst} = redux.sync.{}.{ty} {}, {}",
                format!("{op:?}").to_lowercase(),
                value(a),
                value(mask)
            )
        }
        InstKind::WarpSync { mask } => format!("bar.warp.sync {}", value(mask)),
        InstKind::ReadSpecial { dst, sreg } => {
            format!("{dst} = special {}", format!("{sreg:?}").to_lowercase())
        }
        InstKind::Call { func, args, rets } => {
            format!(
                "({}) = call {}({})",
                call_args(f, rets),
                m.functions
                    .get(*func)
                    .map(|f| f.name.as_str())
                    .unwrap_or("?"),
                call_args(f, args)
            )
        }
        InstKind::CallIndirect { target, args, rets } => {
            format!(
                "({}) = call_indirect {}({})",
                call_args(f, rets),
                value(target),
                call_args(f, args)
            )
        }
        InstKind::Builtin { which, args, rets } => {
            format!(
                "({}) = builtin {}({})",
                call_args(f, rets),
                which.name(),
                call_args(f, args)
            )
        }
        InstKind::Trap => "trap".into(),
        InstKind::Nop => "nop".into(),
    };
    s.push_str(&body);
    s
}

pub fn print_function(m: &Module, _id: crate::entity::FuncId, f: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} {{",
        if f.is_kernel { "kernel" } else { "func" },
        f.signature()
    );
    for p in &f.returns {
        let _ = writeln!(out, "  ; returns .{} {}", p.ty, p.name);
    }
    for p in &f.params {
        if let ParamBinding::Reg(r) = p.binding {
            let _ = writeln!(out, "  ; param {} in {}", p.name, r);
        }
    }
    if !f.locals.is_empty() {
        let _ = writeln!(out, "  ; frame {} bytes", f.frame_size);
        for (id, l) in f.locals.iter() {
            let _ = writeln!(
                out,
                "  ;   {id} %{} at {} size {}",
                l.name, l.offset, l.size
            );
        }
    }
    for (id, r) in f.regs.iter() {
        let _ = writeln!(out, "  ; {id}: .{} {}", r.ty, r.name);
    }
    for (bid, b) in f.blocks.iter() {
        let _ = writeln!(
            out,
            "{bid}:{}",
            b.name
                .as_ref()
                .map(|n| format!("  ; {n}"))
                .unwrap_or_default()
        );
        for inst in &b.insts {
            let _ = writeln!(out, "    {}", print_inst(m, f, inst));
        }
        let term = match &b.term {
            Some(Terminator::Jump(t)) => format!("jump {t}"),
            Some(Terminator::Branch {
                pred,
                negate,
                then,
                els,
            }) => {
                format!(
                    "branch {}{pred}, {then}, {els}",
                    if *negate { "!" } else { "" }
                )
            }
            Some(Terminator::Return) => "return".into(),
            Some(Terminator::Exit) => "exit".into(),
            None => "<no terminator>".into(),
        };
        let _ = writeln!(out, "    {term}");
    }
    out.push_str("}\n");
    out
}
