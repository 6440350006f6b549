//! Inlining device-function calls into a kernel, for backends that compile
//! one flat function. Each call site gets its own copy of the callee's
//! registers, frame variables and blocks; `.param` arguments and results
//! are copied through the frame as the call would. Recursive and indirect
//! calls cannot be inlined.

use crate::entity::{BlockId, FuncId, LocalId, Reg};
use crate::inst::*;
use crate::module::{Block, Function, Module, ParamBinding, RegInfo};
use crate::types::{Space, Ty};

/// Most instructions an inlined kernel may have (guards code size).
const MAX_INSTS: usize = 200_000;

/// Rename every register and frame variable an instruction names.
pub fn remap(kind: &mut InstKind, r: &dyn Fn(Reg) -> Reg, l: &dyn Fn(LocalId) -> LocalId) {
    let v = |x: &mut Value| {
        if let Value::Reg(g) = x {
            *g = r(*g);
        }
    };
    let a = |ad: &mut Address| match &mut ad.base {
        AddrBase::Reg(g) => *g = r(*g),
        AddrBase::Symbol(Symbol::Local(x)) => *x = l(*x),
        _ => {}
    };
    let c = |ca: &mut CallArg| match ca {
        CallArg::Reg(g) => *g = r(*g),
        CallArg::Local(x) => *x = l(*x),
        CallArg::Imm(_) => {}
    };
    match kind {
        InstKind::Mov { dst, src, .. } => {
            *dst = r(*dst);
            v(src);
        }
        InstKind::AddrOf { dst, sym, .. } => {
            *dst = r(*dst);
            if let Symbol::Local(x) = sym {
                *x = l(*x);
            }
        }
        InstKind::Int { dst, args, .. } | InstKind::Float { dst, args, .. } => {
            *dst = r(*dst);
            args.iter_mut().for_each(v);
        }
        InstKind::Carry {
            dst,
            a: x,
            b,
            carry_in,
            carry_out,
            ..
        } => {
            *dst = r(*dst);
            v(x);
            v(b);
            if let Some(ci) = carry_in {
                *ci = r(*ci);
            }
            if let Some(co) = carry_out {
                *co = r(*co);
            }
        }
        InstKind::Setp {
            dst,
            dst2,
            a: x,
            b,
            combine,
            ..
        } => {
            *dst = r(*dst);
            if let Some(d) = dst2 {
                *d = r(*d);
            }
            v(x);
            v(b);
            if let Some((_, p, _)) = combine {
                v(p);
            }
        }
        InstKind::Set {
            dst,
            a: x,
            b,
            combine,
            ..
        } => {
            *dst = r(*dst);
            v(x);
            v(b);
            if let Some((_, p, _)) = combine {
                v(p);
            }
        }
        InstKind::Selp {
            dst,
            a: x,
            b,
            c: cc,
            ..
        }
        | InstKind::Slct {
            dst,
            a: x,
            b,
            c: cc,
            ..
        } => {
            *dst = r(*dst);
            v(x);
            v(b);
            v(cc);
        }
        InstKind::PredOp { dst, a: x, b, .. } => {
            *dst = r(*dst);
            v(x);
            v(b);
        }
        InstKind::Testp { dst, a: x, .. }
        | InstKind::IsSpace { dst, src: x, .. }
        | InstKind::Cvt { dst, src: x, .. }
        | InstKind::Cvta { dst, src: x, .. } => {
            *dst = r(*dst);
            v(x);
        }
        InstKind::Pack { dst, parts, .. } => {
            *dst = r(*dst);
            parts.iter_mut().for_each(v);
        }
        InstKind::Unpack { dsts, src, .. } => {
            dsts.iter_mut().flatten().for_each(|d| *d = r(*d));
            v(src);
        }
        InstKind::Ld { dsts, addr, .. } => {
            dsts.iter_mut().flatten().for_each(|d| *d = r(*d));
            a(addr);
        }
        InstKind::St { srcs, addr, .. } => {
            srcs.iter_mut().for_each(v);
            a(addr);
        }
        InstKind::Atom {
            dst, addr, a: x, b, ..
        } => {
            if let Some(d) = dst {
                *d = r(*d);
            }
            a(addr);
            v(x);
            if let Some(b) = b {
                v(b);
            }
        }
        InstKind::Bar {
            id,
            count,
            dst,
            pred,
            ..
        } => {
            v(id);
            if let Some(cn) = count {
                v(cn);
            }
            if let Some(d) = dst {
                *d = r(*d);
            }
            if let Some((p, _)) = pred {
                v(p);
            }
        }
        InstKind::Shfl {
            dst,
            pred_dst,
            a: x,
            b,
            c: cc,
            mask,
            ..
        } => {
            *dst = r(*dst);
            if let Some(p) = pred_dst {
                *p = r(*p);
            }
            v(x);
            v(b);
            v(cc);
            v(mask);
        }
        InstKind::Vote {
            dst, a: x, mask, ..
        }
        | InstKind::Redux {
            dst, a: x, mask, ..
        } => {
            *dst = r(*dst);
            v(x);
            v(mask);
        }
        InstKind::Match {
            dst,
            pred_dst,
            a: x,
            mask,
            ..
        } => {
            *dst = r(*dst);
            if let Some(p) = pred_dst {
                *p = r(*p);
            }
            v(x);
            v(mask);
        }
        InstKind::Activemask { dst } | InstKind::ReadSpecial { dst, .. } => *dst = r(*dst),
        InstKind::WarpSync { mask } => v(mask),
        InstKind::Call { args, rets, .. } | InstKind::Builtin { args, rets, .. } => {
            args.iter_mut().for_each(c);
            rets.iter_mut().for_each(c);
        }
        InstKind::CallIndirect { target, args, rets } => {
            v(target);
            args.iter_mut().for_each(c);
            rets.iter_mut().for_each(c);
        }
        InstKind::Fence | InstKind::Trap | InstKind::Nop => {}
    }
}

fn local_addr(l: LocalId, offset: i64) -> Address {
    Address {
        base: AddrBase::Symbol(Symbol::Local(l)),
        offset,
    }
}

/// Instructions copying `size` bytes between frame variables.
fn copy_local(
    f: &mut Function,
    from: LocalId,
    to: LocalId,
    size: u64,
    loc: SrcLoc,
    out: &mut Vec<Inst>,
) {
    let mut off = 0u64;
    while off < size {
        let chunk = if size - off >= 8 && off.is_multiple_of(8) {
            8
        } else if size - off >= 4 && off.is_multiple_of(4) {
            4
        } else if size - off >= 2 && off.is_multiple_of(2) {
            2
        } else {
            1
        };
        let ty = Ty::uint(chunk * 8);
        let t = f.regs.push(RegInfo {
            name: "%inline.copy".into(),
            ty,
        });
        out.push(Inst {
            kind: InstKind::Ld {
                space: Space::Local,
                ty,
                dsts: vec![Some(t)],
                addr: local_addr(from, off as i64),
                volatile: false,
            },
            guard: None,
            loc,
        });
        out.push(Inst {
            kind: InstKind::St {
                space: Space::Local,
                ty,
                srcs: vec![Value::Reg(t)],
                addr: local_addr(to, off as i64),
                volatile: false,
            },
            guard: None,
            loc,
        });
        off += u64::from(chunk);
    }
}

/// Store a register or immediate of `size` bytes into a frame variable.
fn store_local(value: Value, to: LocalId, size: u64, loc: SrcLoc, out: &mut Vec<Inst>) {
    let ty = Ty::uint((size.clamp(1, 8) as u32).next_power_of_two() * 8);
    out.push(Inst {
        kind: InstKind::St {
            space: Space::Local,
            ty,
            srcs: vec![value],
            addr: local_addr(to, 0),
            volatile: false,
        },
        guard: None,
        loc,
    });
}

/// Whether `f` can reach itself through calls.
fn recursive(m: &Module, start: FuncId) -> bool {
    let mut seen = vec![false; m.functions.len()];
    let mut work = vec![start];
    while let Some(f) = work.pop() {
        for b in m.functions[f].blocks.values() {
            for i in &b.insts {
                if let InstKind::Call { func, .. } = i.kind {
                    if func == start {
                        return true;
                    }
                    if !seen[func.0 as usize] {
                        seen[func.0 as usize] = true;
                        work.push(func);
                    }
                }
            }
        }
    }
    false
}

/// Replace the indirect call `f.blocks[b].insts[k]` by tests of the target
/// against each function it can reach (address taken, same number of
/// parameters and results), in function order, each followed by a direct
/// call of that function and a jump to the code after the call. Lanes whose
/// target is none of them fault first, before any lane calls (as the
/// interpreter checks every lane's target first). Gives the new blocks in
/// scheduling order.
fn expand_indirect(
    m: &Module,
    f: &mut Function,
    b: BlockId,
    k: usize,
    addr: &dyn Fn(FuncId) -> u64,
) -> Result<Vec<BlockId>, String> {
    let call = f.blocks[b].insts[k].clone();
    let InstKind::CallIndirect { target, args, rets } = call.kind else {
        return Err("not an indirect call".into());
    };
    let loc = call.loc;
    let candidates: Vec<FuncId> = crate::shared::address_taken(m)
        .into_iter()
        .filter(|c| {
            m.functions.get(*c).is_some_and(|cf| {
                !cf.is_kernel && cf.params.len() == args.len() && cf.returns.len() == rets.len()
            })
        })
        .collect();
    let rest: Vec<Inst> = f.blocks[b].insts.split_off(k + 1);
    f.blocks[b].insts.pop();
    let term = f.blocks[b].term.take();
    let block = |f: &mut Function, insts: Vec<Inst>, term: Terminator| {
        f.blocks.push(Block {
            name: None,
            insts,
            term: Some(term),
        })
    };
    let inst = |kind: InstKind| Inst {
        kind,
        guard: None,
        loc,
    };
    // `dst` = (target == c's address) [or `also`].
    let is_callee = |dst: Reg, c: FuncId, also: Option<Reg>| {
        inst(InstKind::Setp {
            cmp: CmpOp::Eq,
            ty: Ty::U64,
            dst,
            dst2: None,
            a: target,
            b: Value::Imm(addr(c)),
            combine: also.map(|q| (BoolOp::Or, Value::Reg(q), false)),
            ftz: false,
        })
    };
    // Built back to front: each test falls through to the next.
    let cont = f.blocks.push(Block {
        name: None,
        insts: rest,
        term,
    });
    let bad = block(
        f,
        vec![inst(InstKind::Builtin {
            which: Builtin::BadFunctionPointer,
            args: vec![match target {
                Value::Reg(r) => CallArg::Reg(r),
                Value::Imm(x) => CallArg::Imm(x),
            }],
            rets: vec![],
        })],
        Terminator::Exit,
    );
    let mut tail = vec![cont];
    // Past the last test no lane is left (all were checked up front).
    let mut next = cont;
    for c in candidates.iter().rev() {
        let call_block = block(
            f,
            vec![inst(InstKind::Call {
                func: *c,
                args: args.clone(),
                rets: rets.clone(),
            })],
            Terminator::Jump(cont),
        );
        let p = f.regs.push(RegInfo {
            name: format!("%wf_callee{}", c.0),
            ty: Ty::Pred,
        });
        let test = block(
            f,
            vec![is_callee(p, *c, None)],
            Terminator::Branch {
                pred: p,
                negate: false,
                then: call_block,
                els: next,
            },
        );
        tail.splice(0..0, [test, call_block]);
        next = test;
    }
    // The check: whether the target is any candidate's address.
    let mut checks = Vec::new();
    let mut any: Option<Reg> = None;
    for c in &candidates {
        let p = f.regs.push(RegInfo {
            name: format!("%wf_is_callee{}", c.0),
            ty: Ty::Pred,
        });
        checks.push(is_callee(p, *c, any));
        any = Some(p);
    }
    let check = match any {
        Some(ok) => block(
            f,
            checks,
            Terminator::Branch {
                pred: ok,
                negate: false,
                then: next,
                els: bad,
            },
        ),
        None => block(f, vec![], Terminator::Jump(bad)),
    };
    tail.splice(0..0, [check, bad]);
    f.blocks[b].term = Some(match call.guard {
        None => Terminator::Jump(check),
        Some((p, negate)) => Terminator::Branch {
            pred: p,
            negate,
            then: check,
            els: cont,
        },
    });
    Ok(tail)
}

/// The kernel with every call inlined, and its blocks in scheduling order
/// (each callee's blocks between its call and the code after it). With
/// `func_addr` (the value a function's address has at run time), calls
/// through function pointers become a test of the pointer against every
/// function whose address is taken, each with a direct call; without,
/// they are an error.
pub fn inline_calls(
    m: &Module,
    kernel: FuncId,
    func_addr: Option<&dyn Fn(FuncId) -> u64>,
) -> Result<(Function, Vec<BlockId>), String> {
    let mut f = m.functions[kernel].clone();
    let mut order: Vec<BlockId> = f.blocks.keys().collect();
    let mut pos = 0;
    while pos < order.len() {
        let b = order[pos];
        let Some(k) = f.blocks[b].insts.iter().position(|i| {
            matches!(
                i.kind,
                InstKind::Call { .. } | InstKind::CallIndirect { .. }
            )
        }) else {
            pos += 1;
            continue;
        };
        let call = f.blocks[b].insts[k].clone();
        if let InstKind::CallIndirect { .. } = call.kind {
            let Some(addr) = func_addr else {
                return Err(format!(
                    "calls through function pointers (PTX line {})",
                    call.loc.line
                ));
            };
            let tail = expand_indirect(m, &mut f, b, k, addr)?;
            order.splice(pos + 1..pos + 1, tail);
            pos += 1;
            continue;
        }
        let InstKind::Call {
            func: callee_id,
            args,
            rets,
        } = call.kind
        else {
            unreachable!("found a call")
        };
        if recursive(m, callee_id) {
            return Err(format!("recursive calls (PTX line {})", call.loc.line));
        }
        let callee = &m.functions[callee_id];
        let total: usize = f.blocks.values().map(|b| b.insts.len()).sum::<usize>()
            + callee.blocks.values().map(|b| b.insts.len()).sum::<usize>();
        if total > MAX_INSTS {
            return Err("kernels too large once their calls are inlined".into());
        }
        // Split: `b` keeps what precedes the call, `cont` the rest.
        let rest: Vec<Inst> = f.blocks[b].insts.split_off(k + 1);
        f.blocks[b].insts.pop();
        let term = f.blocks[b].term.take();
        let cont = f.blocks.push(Block {
            name: None,
            insts: rest,
            term,
        });
        // The callee's registers, frame variables and blocks, renamed.
        let reg_base = f.regs.len() as u32;
        for (_, ri) in callee.regs.iter() {
            f.regs.push(RegInfo {
                name: format!("{}.{}", callee.name, ri.name),
                ty: ri.ty,
            });
        }
        let mut local_map = Vec::new();
        for (_, lv) in callee.locals.iter() {
            local_map.push(f.add_local(format!("{}.{}", callee.name, lv.name), lv.size, lv.align));
        }
        let block_base = f.blocks.len() as u32;
        let ret_block = BlockId(block_base + callee.blocks.len() as u32);
        let rr = |x: Reg| Reg(x.0 + reg_base);
        let ll = |x: LocalId| local_map[x.0 as usize];
        let mut new_blocks = Vec::new();
        for (_, cb) in callee.blocks.iter() {
            let mut nb = cb.clone();
            for i in &mut nb.insts {
                remap(&mut i.kind, &rr, &ll);
                if let Some((g, _)) = &mut i.guard {
                    *g = rr(*g);
                }
            }
            nb.term = match nb.term {
                Some(Terminator::Jump(t)) => Some(Terminator::Jump(BlockId(t.0 + block_base))),
                Some(Terminator::Branch {
                    pred,
                    negate,
                    then,
                    els,
                }) => Some(Terminator::Branch {
                    pred: rr(pred),
                    negate,
                    then: BlockId(then.0 + block_base),
                    els: BlockId(els.0 + block_base),
                }),
                Some(Terminator::Return) => Some(Terminator::Jump(ret_block)),
                other => other,
            };
            new_blocks.push(f.blocks.push(nb));
        }
        // Arguments in, at the end of `b`.
        let loc = call.loc;
        let mut setup = Vec::new();
        for (arg, p) in args.iter().zip(&callee.params) {
            match (p.binding, arg) {
                (ParamBinding::Local(pl), CallArg::Local(src)) => {
                    copy_local(&mut f, *src, ll(pl), p.size, loc, &mut setup)
                }
                (ParamBinding::Local(pl), CallArg::Reg(r)) => {
                    store_local(Value::Reg(*r), ll(pl), p.size, loc, &mut setup)
                }
                (ParamBinding::Local(pl), CallArg::Imm(x)) => {
                    store_local(Value::Imm(*x), ll(pl), p.size, loc, &mut setup)
                }
                (ParamBinding::Reg(pr), CallArg::Reg(r)) => setup.push(Inst {
                    kind: InstKind::Mov {
                        ty: Ty::B64,
                        dst: rr(pr),
                        src: Value::Reg(*r),
                    },
                    guard: None,
                    loc,
                }),
                (ParamBinding::Reg(pr), CallArg::Imm(x)) => setup.push(Inst {
                    kind: InstKind::Mov {
                        ty: Ty::B64,
                        dst: rr(pr),
                        src: Value::Imm(*x),
                    },
                    guard: None,
                    loc,
                }),
                (ParamBinding::Reg(pr), CallArg::Local(src)) => {
                    let ty = Ty::uint((p.size.clamp(1, 8) as u32).next_power_of_two() * 8);
                    setup.push(Inst {
                        kind: InstKind::Ld {
                            space: Space::Local,
                            ty,
                            dsts: vec![Some(rr(pr))],
                            addr: local_addr(*src, 0),
                            volatile: false,
                        },
                        guard: None,
                        loc,
                    });
                }
                (ParamBinding::KernelBuffer, _) => {
                    return Err("a kernel called as a function".into())
                }
            }
        }
        f.blocks[b].insts.extend(setup);
        let entry = BlockId(callee.entry.0 + block_base);
        f.blocks[b].term = Some(match call.guard {
            None => Terminator::Jump(entry),
            Some((p, negate)) => Terminator::Branch {
                pred: p,
                negate,
                then: entry,
                els: cont,
            },
        });
        // Results out, in a block the callee's returns jump to.
        let mut outs = Vec::new();
        for (dst, p) in rets.iter().zip(&callee.returns) {
            match (p.binding, dst) {
                (ParamBinding::Local(pl), CallArg::Local(d)) => {
                    copy_local(&mut f, ll(pl), *d, p.size, loc, &mut outs)
                }
                (ParamBinding::Local(pl), CallArg::Reg(d)) => {
                    let ty = Ty::uint((p.size.clamp(1, 8) as u32).next_power_of_two() * 8);
                    outs.push(Inst {
                        kind: InstKind::Ld {
                            space: Space::Local,
                            ty,
                            dsts: vec![Some(*d)],
                            addr: local_addr(ll(pl), 0),
                            volatile: false,
                        },
                        guard: None,
                        loc,
                    });
                }
                (ParamBinding::Reg(pr), CallArg::Reg(d)) => outs.push(Inst {
                    kind: InstKind::Mov {
                        ty: Ty::B64,
                        dst: *d,
                        src: Value::Reg(rr(pr)),
                    },
                    guard: None,
                    loc,
                }),
                (ParamBinding::Reg(pr), CallArg::Local(d)) => {
                    store_local(Value::Reg(rr(pr)), *d, p.size, loc, &mut outs)
                }
                _ => {}
            }
        }
        let rb = f.blocks.push(Block {
            name: None,
            insts: outs,
            term: Some(Terminator::Jump(cont)),
        });
        debug_assert_eq!(rb, ret_block);
        // Scheduling order: caller part, callee, results, the rest.
        let mut tail = new_blocks;
        tail.push(rb);
        tail.push(cont);
        order.splice(pos + 1..pos + 1, tail);
        // Look at `b` again? It no longer has calls; continue with the
        // callee's blocks (they may call further).
        pos += 1;
    }
    Ok((f, order))
}
