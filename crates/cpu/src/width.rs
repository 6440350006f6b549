//! How many lanes a warp of generated code has. The GPU's warp is 32
//! threads, and 32 lanes fill two AVX-512 registers per 32-bit value; with
//! AVX2 they take four of sixteen ymm registers, so live values spill. A
//! warp of W = 8 or 16 lanes is an aligned slice of the GPU's warp
//! (thread = warp * W + lane), which changes nothing a kernel can see
//! unless it observes the warp itself: warp collectives, lane ids and
//! masks, or the order in which the lanes of one warp run (warp-
//! synchronous code through volatile memory, atomics whose results or
//! order show, host calls). Those kernels keep 32 lanes.

use crate::prepare::{counted_barrier, Prepared};
use warpfold_ir::*;

/// The widths generated code can have.
pub const WIDTHS: [u32; 3] = [8, 16, 32];

/// The width a kernel is compiled with for blocks of `threads` threads:
/// `want` (from `WARPFOLD_WARP_WIDTH` or the CPU), widened so a CTA has at
/// most 32 warps (the driver's tables), or 32 when the kernel observes its
/// warp (see `needs_full_warps`) or runs packed CTAs.
pub fn choose(p: &Prepared, threads: u32, want: u32, packed: bool) -> u32 {
    if want >= 32 || packed {
        return 32;
    }
    let mut w = want;
    while w < 32 && threads > 32 * w {
        w *= 2;
    }
    if w < 32 && needs_full_warps(p).is_some() {
        return 32;
    }
    w
}

/// The width asked for: `WARPFOLD_WARP_WIDTH` (8, 16 or 32; anything else
/// is reported once and ignored), else 32.
pub fn requested() -> u32 {
    static WANT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *WANT.get_or_init(|| match std::env::var("WARPFOLD_WARP_WIDTH") {
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(w) if WIDTHS.contains(&w) => w,
            _ => {
                eprintln!(
                    "warpfold: WARPFOLD_WARP_WIDTH={v:?} is not 8, 16 or 32; using 32"
                );
                32
            }
        },
        Err(_) => 32,
    })
}

/// Why kernel `p` must run with the GPU's 32-lane warps, if it must (the
/// first reason found).
pub fn needs_full_warps(p: &Prepared) -> Option<String> {
    let f = &p.func;
    // Registers some instruction reads: an atomic's old value that nothing
    // reads cannot show the order of the lanes (branches read predicates
    // only, never an atomic's result).
    let mut read = vec![false; f.regs.len()];
    for b in f.blocks.values() {
        for i in &b.insts {
            for r in crate::uniform::uses(i) {
                read[r.0 as usize] = true;
            }
        }
    }
    for b in f.blocks.values() {
        for i in &b.insts {
            let why = match &i.kind {
                InstKind::Shfl { .. }
                | InstKind::Vote { .. }
                | InstKind::Match { .. }
                | InstKind::Redux { .. }
                | InstKind::WarpSync { .. }
                | InstKind::Activemask { .. } => Some("a warp collective"),
                InstKind::ReadSpecial { sreg, .. } => match sreg {
                    Special::LaneId
                    | Special::WarpId
                    | Special::NWarpId
                    | Special::LaneMaskEq
                    | Special::LaneMaskLe
                    | Special::LaneMaskLt
                    | Special::LaneMaskGe
                    | Special::LaneMaskGt => Some("a lane or warp id"),
                    _ => None,
                },
                InstKind::Ld { volatile: true, .. } | InstKind::St { volatile: true, .. } => {
                    Some("volatile memory accesses (warp-synchronous code)")
                }
                InstKind::Atom { op, ty, dst, .. } => {
                    let commutes = matches!(
                        op,
                        AtomOp::Add | AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor
                    ) && !ty.is_float();
                    let shown = dst.is_some_and(|d| read[d.0 as usize]);
                    (!commutes || shown).then_some("atomics whose order shows")
                }
                InstKind::Fence => Some("memory fences"),
                InstKind::Bar { kind, .. } if counted_barrier(&i.kind) || *kind != BarKind::Sync => {
                    Some("barriers other than bar.sync")
                }
                InstKind::Builtin { .. } | InstKind::Trap => Some("printf, assert or trap"),
                InstKind::Call { .. } | InstKind::CallIndirect { .. } => Some("calls"),
                _ => None,
            };
            if let Some(why) = why {
                return Some(format!("{why} (PTX line {})", i.loc.line));
            }
        }
    }
    None
}
