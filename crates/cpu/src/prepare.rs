//! Preparing a kernel for compilation: check that the backend supports
//! everything in it, and split blocks so that every barrier and warp
//! collective starts a block of its own (those are the points where a
//! warp's lanes may have to wait), keeping blocks in source order, which is
//! the order in which divergent lanes are scheduled. Collectives in blocks
//! every live lane runs together (see `lanes`) need no split: all their
//! members are there, or never will be.

use warpfold_ir::*;

/// A kernel the backend cannot compile yet, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// Blocks in scheduling order; `order[i]` is the block with id `i`.
pub struct Prepared {
    pub func: Function,
    pub order: Vec<BlockId>,
    /// id of each block (index by BlockId).
    pub id_of: Vec<u32>,
}

impl Prepared {
    /// Each barrier (alone in its block, which jumps to the rest: see
    /// `prepare`) with the block after it, in block order.
    pub fn barriers(&self) -> impl Iterator<Item = (&InstKind, BlockId)> + '_ {
        self.order.iter().filter_map(|b| {
            let block = &self.func.blocks[*b];
            match (block.insts.first(), &block.term) {
                (Some(i), Some(Terminator::Jump(t))) if matches!(i.kind, InstKind::Bar { .. }) => {
                    Some((&i.kind, *t))
                }
                _ => None,
            }
        })
    }

    /// Each block's successors, by order id (see `id_of`).
    pub(crate) fn succs(&self) -> Vec<Vec<usize>> {
        self.order
            .iter()
            .map(|b| {
                crate::lanes::succs(&self.func.blocks[*b])
                    .iter()
                    .map(|t| self.id_of[t.0 as usize] as usize)
                    .collect()
            })
            .collect()
    }

    /// The control-flow graph by order id (see `id_of`): each block's
    /// successors, and each block's predecessors.
    pub(crate) fn edges(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let succs = self.succs();
        let mut preds = vec![Vec::new(); succs.len()];
        for (a, ss) in succs.iter().enumerate() {
            for &b in ss {
                preds[b].push(a);
            }
        }
        (succs, preds)
    }
}

/// Warp collectives and barriers: they wait for lanes that are elsewhere.
pub(crate) fn is_sync_point(k: &InstKind) -> bool {
    matches!(
        k,
        InstKind::Shfl { .. }
            | InstKind::Vote { .. }
            | InstKind::Match { .. }
            | InstKind::Redux { .. }
            | InstKind::WarpSync { .. }
            | InstKind::Bar { .. }
    )
}

fn check(f: &Function) -> Result<(), Unsupported> {
    for b in f.blocks.values() {
        for i in &b.insts {
            let what = match &i.kind {
                InstKind::Call { .. } | InstKind::CallIndirect { .. } => {
                    Some("calls of device functions")
                }
                InstKind::Bar {
                    kind, count, id, ..
                } if *kind == BarKind::Arrive || count.is_some() => {
                    // The driver counts arrivals per barrier id; odd forms
                    // (and the errors they make) stay with the interpreter.
                    let ok_id = matches!(id, Value::Imm(v) if *v < 16);
                    let ok_count = match count {
                        None => true,
                        Some(Value::Imm(c)) => *c > 0 && *c % 32 == 0 && *c <= 1024,
                        Some(_) => false,
                    };
                    (!ok_id || !ok_count)
                        .then_some("barriers with run-time ids or odd thread counts")
                }
                _ => None,
            };
            if let Some(w) = what {
                return Err(Unsupported(format!("{w} (PTX line {})", i.loc.line)));
            }
        }
    }
    let bars = || f.blocks.values().flat_map(|b| &b.insts);
    // Counted barriers index the CTA's table by id: every barrier of such
    // a kernel needs a constant id in range (the interpreter reports others).
    let counted = bars().any(|i| counted_barrier(&i.kind));
    if counted
        && bars().any(|i| {
            matches!(&i.kind, InstKind::Bar { id, .. } if !matches!(id, Value::Imm(v) if *v < 16))
        })
    {
        return Err(Unsupported(
            "barriers with run-time or out-of-range ids next to counted barriers".into(),
        ));
    }
    if counted
        && bars().any(|i| {
            matches!(
                i.kind,
                InstKind::Bar {
                    kind: BarKind::Red(_),
                    ..
                }
            )
        })
    {
        return Err(Unsupported(
            "bar.red together with bar.arrive or counted barriers".into(),
        ));
    }
    Ok(())
}

/// `bar.arrive` and barriers with a thread count: the CTA driver counts
/// their arrivals per barrier id (see `lib.rs`).
pub fn counted_barrier(k: &InstKind) -> bool {
    matches!(k, InstKind::Bar { kind, count, .. } if *kind == BarKind::Arrive || count.is_some())
}

/// Kernel `name` of PTX `src`, prepared with every collective splitting
/// its block (what the analyses' unit tests look at).
#[cfg(test)]
pub(crate) fn prepared(src: &str, name: &str) -> Prepared {
    prepared_in(src, name).2
}

/// `prepared`, with the module and the kernel's id.
#[cfg(test)]
pub(crate) fn prepared_in(src: &str, name: &str) -> (Module, FuncId, Prepared) {
    let m = warpfold_ptx::load(src).expect("parses");
    let (k, _) = m.kernels().find(|(_, f)| f.name == name).expect("kernel");
    let p = prepare(&m, k, None, None, &|_| true).expect("prepares");
    (m, k, p)
}

/// `split_collectives(b)`: whether warp collectives in block `b` (of the
/// function after inlining) start blocks of their own.
/// With `packed`, the kernel is rewritten to run several CTAs of that
/// shape in one warp (see `pack`).
pub fn prepare(
    m: &Module,
    kernel: FuncId,
    packed: Option<(crate::lanes::Shape, u64)>,
    merged: Option<(crate::lanes::Shape, u32)>,
    split_collectives: &dyn Fn(BlockId) -> bool,
) -> Result<Prepared, Unsupported> {
    // Device functions are inlined: the warp function is one flat CFG.
    // Function addresses have the interpreter's values (function-pointer
    // tables in memory hold them).
    let addr = |f: FuncId| warpfold_interp::memory::FUNC_WINDOW + 16 * u64::from(f.0);
    let (mut func, layout) =
        warpfold_ir::inline::inline_calls(m, kernel, Some(&addr)).map_err(Unsupported)?;
    check(&func)?;
    if let Some((shape, stride)) = packed {
        crate::pack::rewrite(m, &mut func, shape, stride)?;
    }
    if let Some((shape, k)) = merged {
        crate::merge::rewrite(m, &mut func, shape, k)?;
    }
    let layout = crate::if_convert::run(&mut func, layout);
    // Blocks are split in place: each block becomes a run of pieces, kept
    // together in the order list.
    let mut order = Vec::new();
    for bid in layout {
        let mut cur = bid;
        order.push(cur);
        let split_here = split_collectives(bid);
        loop {
            let insts = &func.blocks[cur].insts;
            let ends_in_jump = matches!(func.blocks[cur].term, Some(Terminator::Jump(_)));
            // First sync point that is not at the start, or a barrier at
            // the start followed by more code or a branch (a barrier is
            // alone in a block that jumps to the rest).
            let split = insts.iter().enumerate().position(|(i, inst)| {
                (i > 0
                    && (matches!(inst.kind, InstKind::Bar { .. })
                        || split_here && is_sync_point(&inst.kind)))
                    || (i == 0
                        && matches!(inst.kind, InstKind::Bar { .. })
                        && (insts.len() > 1 || !ends_in_jump))
            });
            let Some(mut at) = split else { break };
            if at == 0 {
                at = 1;
            }
            let tail: Vec<Inst> = func.blocks[cur].insts.split_off(at);
            let term = func.blocks[cur].term.take();
            let next = func.blocks.push(Block {
                name: None,
                insts: tail,
                term,
            });
            func.blocks[cur].term = Some(Terminator::Jump(next));
            order.push(next);
            cur = next;
        }
    }
    skip_empty_blocks(&mut func, &mut order);
    let mut id_of = vec![u32::MAX; func.blocks.len()];
    for (i, b) in order.iter().enumerate() {
        id_of[b.0 as usize] = i as u32;
    }
    Ok(Prepared { func, order, id_of })
}

/// Jumps and branches to an empty block that only jumps on, forward, go
/// straight to where it leads, and blocks no longer reached leave the
/// order (PTX's `bra.uni` after a branch makes such blocks: they hid a 2-D
/// stencil's if-else diamond). Lanes stopping at such a block would do
/// nothing there and then be at its target: with the target later in the
/// order, the blocks with instructions run in the same order by the
/// earliest-block rule. Not for backward jumps, where blocks between could
/// run first.
fn skip_empty_blocks(func: &mut Function, order: &mut Vec<BlockId>) {
    let mut pos = vec![usize::MAX; func.blocks.len()];
    for (i, b) in order.iter().enumerate() {
        pos[b.0 as usize] = i;
    }
    let on = |f: &Function, mut b: BlockId| {
        while let (true, Some(Terminator::Jump(t))) =
            (f.blocks[b].insts.is_empty(), &f.blocks[b].term)
        {
            // Positions only grow: the walk ends.
            if pos[t.0 as usize] == usize::MAX || pos[t.0 as usize] <= pos[b.0 as usize] {
                break;
            }
            b = *t;
        }
        b
    };
    for &b in order.iter() {
        let term = match func.blocks[b].term.clone() {
            Some(Terminator::Jump(t)) => Some(Terminator::Jump(on(func, t))),
            Some(Terminator::Branch {
                pred,
                negate,
                then,
                els,
            }) => Some(Terminator::Branch {
                pred,
                negate,
                then: on(func, then),
                els: on(func, els),
            }),
            other => other,
        };
        func.blocks[b].term = term;
    }
    keep_reached(func, order);
}

/// Drop from `order` the blocks no path from its first block (the entry)
/// reaches.
pub(crate) fn keep_reached(func: &Function, order: &mut Vec<BlockId>) {
    let mut reached = vec![false; func.blocks.len()];
    let mut stack: Vec<BlockId> = order.first().copied().into_iter().collect();
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reached[b.0 as usize], true) {
            stack.extend(crate::lanes::succs(&func.blocks[b]));
        }
    }
    order.retain(|b| reached[b.0 as usize]);
}
