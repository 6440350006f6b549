//! Regions between barriers. After a barrier that every warp of the CTA
//! reached with all its lanes (a lean release, see `emit::cta_fn`), the
//! round loop runs each warp through a function holding only the blocks
//! lanes can reach from the block after the barrier without passing
//! another one: it starts there directly, with every lane live (so LLVM
//! folds the masked forms of convergent code away), and touches only the
//! registers the region uses. The general warp function remains for
//! everything else (the first round, partial warps, yields, divergence at
//! barriers).

use crate::prepare::Prepared;
use warpfold_ir::*;

/// A region after a barrier: its first block and, by block id, the blocks
/// lanes can reach from there without passing another barrier (the
/// barrier blocks that end it included).
pub struct Region {
    pub entry: u32,
    /// The region of a warp's first call (from the entry block, every lane
    /// live, nothing saved yet) rather than one after a barrier.
    pub fresh: bool,
    pub inside: Vec<bool>,
    /// The registers the region's code touches: read or written in its
    /// blocks, computed again on entry, or live into it (and so live
    /// through it). Any other register is dead here: the region neither
    /// declares, loads nor saves it.
    pub regs: Vec<bool>,
    /// The registers its blocks write: the only ones it has to save (the
    /// others keep their saved values).
    pub defs: Vec<bool>,
}

impl Region {
    /// `live_in`: per block, the registers live on entry; `remat`: the
    /// instructions computed again on every resume.
    pub fn new(p: &Prepared, live_in: &[Vec<bool>], remat: &[Inst], entry: u32) -> Region {
        let inside = blocks(p, entry);
        let mut regs = live_in[p.order[entry as usize].0 as usize].clone();
        let mut defs = vec![false; regs.len()];
        let mut mark = |i: &Inst| {
            for r in crate::uniform::uses(i)
                .into_iter()
                .chain(crate::uniform::defs(&i.kind))
            {
                regs[r.0 as usize] = true;
            }
        };
        for i in remat {
            mark(i);
        }
        let mut preds = Vec::new();
        for (id, bid) in p.order.iter().enumerate() {
            if !inside[id] {
                continue;
            }
            let b = &p.func.blocks[*bid];
            b.insts.iter().for_each(&mut mark);
            for i in &b.insts {
                for r in crate::uniform::defs(&i.kind) {
                    defs[r.0 as usize] = true;
                }
            }
            if let Some(Terminator::Branch { pred, .. }) = &b.term {
                preds.push(*pred);
            }
        }
        for r in preds {
            regs[r.0 as usize] = true;
        }
        Region {
            entry,
            fresh: false,
            inside,
            regs,
            defs,
        }
    }

    /// The region a full warp starts in: from the entry block to the
    /// first barriers (the whole kernel when it has none).
    pub fn fresh(p: &Prepared, live_in: &[Vec<bool>]) -> Region {
        Region {
            fresh: true,
            ..Region::new(p, live_in, &[], 0)
        }
    }
}

/// `WARPFOLD_REGIONS=off` runs every round through the general warp
/// function (for comparisons).
pub fn enabled() -> bool {
    std::env::var("WARPFOLD_REGIONS").map_or(true, |v| v != "off")
}

/// `WARPFOLD_FRESH=off` (or `WARPFOLD_REGIONS=off`) starts full warps in
/// the general warp function too.
pub fn fresh_enabled() -> bool {
    enabled() && std::env::var("WARPFOLD_FRESH").map_or(true, |v| v != "off")
}

/// The blocks of the region starting at block id `entry` (see `Region`).
pub fn blocks(p: &Prepared, entry: u32) -> Vec<bool> {
    let f = &p.func;
    let mut inside = vec![false; p.order.len()];
    let mut stack = vec![entry];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut inside[id as usize], true) {
            continue;
        }
        let block = &f.blocks[p.order[id as usize]];
        // `bar.arrive` counts the lanes and lets them go on (see
        // `lower::emit_inst`): its block is an ordinary one here.
        let is_barrier = matches!(
            block.insts.first(),
            Some(i) if matches!(i.kind, InstKind::Bar { kind, .. } if kind != BarKind::Arrive)
        );
        if is_barrier {
            continue;
        }
        let succs: Vec<BlockId> = match &block.term {
            Some(Terminator::Jump(t)) => vec![*t],
            Some(Terminator::Branch { then, els, .. }) => vec![*then, *els],
            _ => vec![],
        };
        stack.extend(succs.iter().map(|b| p.id_of[b.0 as usize]));
    }
    inside
}
