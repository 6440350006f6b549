//! How many lanes a warp of generated code has. The GPU's warp is 32
//! threads, and 32 lanes fill two AVX-512 registers per 32-bit value; with
//! AVX2 they take four of sixteen ymm registers, so live values spill. A
//! warp of W = 8 or 16 lanes is an aligned slice of the GPU's warp
//! (thread = warp * W + lane), which changes nothing a kernel can see
//! unless it observes the warp itself: warp collectives, lane ids and
//! masks, or the order in which the lanes of one warp run (warp-
//! synchronous code through volatile memory, atomics whose results or
//! order show, host calls). Those kernels keep 32 lanes.

use crate::lanes::Lanes;
use crate::prepare::{counted_barrier, Prepared};
use crate::uniform::Liveness;
use warpfold_ir::*;

/// The widths generated code can have.
pub const WIDTHS: [u32; 3] = [8, 16, 32];

/// The width a kernel is compiled with for blocks of `threads` threads:
/// `asked` (a caller's choice), else the one `WARPFOLD_WARP_WIDTH` asks
/// for, else `automatic`'s, widened so a CTA has at most 32 warps (the
/// driver's tables); 32 when the kernel observes its warp (see
/// `needs_full_warps`) or runs packed CTAs.
pub fn choose(k: &Kernel, threads: u32, asked: Option<u32>, packed: bool) -> u32 {
    if packed {
        return 32;
    }
    let asked = asked.filter(|w| WIDTHS.contains(w));
    let mut w = asked.or_else(requested).unwrap_or_else(|| automatic(k));
    while w < 32 && threads > 32 * w {
        w *= 2;
    }
    if w < 32 && needs_full_warps(k.p).is_some() {
        return 32;
    }
    w
}

/// What the automatic choice looks at.
pub struct Kernel<'a> {
    pub p: &'a Prepared,
    /// Lane forms at 32 lanes: registers with a form are kept as scalars.
    pub forms: &'a [Option<Lanes>],
    pub liveness: &'a Liveness,
    /// LLVM target features of the CPU (`+avx512f,...`).
    pub features: &'a str,
}

/// The widest warp whose vector registers live round the kernel's loops
/// fit in three quarters of the CPU's vector register file (the rest is
/// for temporaries), among the widths that keep at least 8 vector
/// registers of loop-carried values (independent chains to cover the
/// latency of the floating-point units): 8 FMA chains fit at 8 lanes on
/// AVX2 and run 3x faster than spilled at 32 lanes, while a loop carrying
/// three values (an escape-time iteration's x, y and count) needs 32
/// lanes to overlap its chains.
/// When no width fits, the narrowest with enough chains. Kernels with
/// barriers keep 32 unless a loop between barriers needs fewer lanes (see
/// `between_barriers`). Barrier-free kernels that use shared memory keep
/// 32: without barriers only a warp's own lanes can share it, which old
/// warp-synchronous code does without `volatile` (a race the
/// interpreter's lock step happens to order).
pub fn automatic(k: &Kernel) -> u32 {
    if k.p.barriers().next().is_some() {
        return between_barriers(barrier_free_loop(k), k.features);
    }
    let shares = uses_shared(k.p);
    let w = pick(shares, || loop_pressure(k), k.features);
    if shares {
        return w;
    }
    let groups = || {
        k.p.order
            .iter()
            .any(|b| !crate::lower::load_groups(k.forms, &k.p.func.blocks[*b].insts, 32).is_empty())
    };
    narrower_for_load_groups(w, k.features, groups)
}

/// The width for a kernel with CTA barriers, given its heaviest loop
/// without a barrier inside (see `barrier_free_loop`): 32, where each
/// barrier round costs every warp a call and a state save (a tree
/// reduction, whose loop holds its barriers: 8 -> 50 ms at 16 lanes on
/// AVX2), unless that loop spills at 32 lanes and has float work enough
/// besides its carried chains to hide their latency: then the widest that
/// fits. N-body's loop over a shared tile (three sums among ~30 float
/// operations a trip, a square root and a division among them) on AVX2:
/// 16 lanes, 0.82x the time of 32 (faster in 5 of 6 interleaved rounds).
fn between_barriers(heaviest: Option<LoopWork>, features: &str) -> u32 {
    let Some(l) = heaviest else { return 32 };
    let room = register_file_bytes(features).0 * 3 / 4;
    let chains = (l.pressure.carried / 4).max(1);
    if l.pressure.live * 32 <= room || l.float_ops < 4 * chains {
        return 32;
    }
    [16, 8]
        .into_iter()
        .find(|&w| l.pressure.live * w <= room)
        .unwrap_or(8)
}

/// A loop's `Pressure` and the float-valued instructions of one trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LoopWork {
    pressure: Pressure,
    float_ops: u32,
}

/// Kernels larger than this (blocks) keep 32 lanes without looking at
/// their loops (as `emit::blocks_on_cycles` stops looking).
const LOOP_SEARCH_BLOCKS: usize = 4000;

/// The natural loop (the back edges to one header together) without a
/// barrier in it that has the most vector bytes live into one of its
/// blocks (see `loop_pressure`), if some block's do spill at 32 lanes and
/// every barrier lies in a loop round it (n-body's tile loop round its
/// loop over the tile; a tree reduction after a heavy loop would pay for
/// narrow warps at each of its rounds).
fn barrier_free_loop(k: &Kernel) -> Option<LoopWork> {
    let p = k.p;
    let f = &p.func;
    let n = p.order.len();
    if n > LOOP_SEARCH_BLOCKS {
        return None;
    }
    let bytes = reg_bytes(f);
    // Vector bytes live into each block: the loop worth narrowing must
    // spill at 32 lanes somewhere, which most kernels do not.
    let live: Vec<u32> = p
        .order
        .iter()
        .map(|b| vector_bytes_into(k, *b, &bytes, |_| true))
        .collect();
    let room = register_file_bytes(k.features).0 * 3 / 4;
    if live.iter().all(|&l| l * 32 <= room) {
        return None;
    }
    let block = |id: usize| &f.blocks[p.order[id]];
    let (succs, preds) = p.edges();
    let dom = crate::dom::Dominators::new(n, 0, &|b| succs[b].clone());
    // Each header's loop: the union of its back edges' natural loops.
    let mut loops: Vec<(usize, Vec<bool>)> = Vec::new();
    for (latch, ss) in succs.iter().enumerate() {
        for &header in ss.iter().filter(|&&h| dom.dominates(h, latch)) {
            let body = crate::lockstep::natural_loop(&preds, latch, header);
            match loops.iter_mut().find(|(h, _)| *h == header) {
                Some((_, all)) => all.iter_mut().zip(&body).for_each(|(a, b)| *a |= *b),
                None => loops.push((header, body)),
            }
        }
    }
    let has_barrier: Vec<bool> = (0..n)
        .map(|id| {
            block(id)
                .insts
                .iter()
                .any(|i| matches!(i.kind, InstKind::Bar { .. }))
        })
        .collect();
    let holds_barrier = |body: &[bool]| (0..n).any(|id| body[id] && has_barrier[id]);
    let (header, body, at) = loops
        .iter()
        .filter(|(_, body)| !holds_barrier(body))
        .filter_map(|(h, body)| {
            let at = (0..n).filter(|&id| body[id]).max_by_key(|&id| live[id])?;
            Some((*h, body, at))
        })
        .max_by_key(|(_, _, at)| live[*at])?;
    // Every barrier in a loop round this one: barriers elsewhere (a tree
    // reduction NVRTC unrolled, after the loop) run as many rounds however
    // little the loop trips.
    let enclosed = |id: usize| loops.iter().any(|(_, outer)| outer[id] && outer[header]);
    if (0..n).any(|id| has_barrier[id] && !enclosed(id)) {
        return None;
    }
    let insts = || {
        (0..n)
            .filter(|&id| body[id])
            .flat_map(|id| &block(id).insts)
    };
    let mut defined = vec![false; bytes.len()];
    for r in insts().flat_map(|i| crate::uniform::defs(&i.kind)) {
        defined[r.0 as usize] = true;
    }
    let carried = vector_bytes_into(k, p.order[at], &bytes, |r| defined[r]);
    let is_float = |r: &Reg| matches!(f.regs[*r].ty, Ty::F32 | Ty::F64);
    let float_ops = insts()
        .filter(|i| crate::uniform::defs(&i.kind).iter().any(is_float))
        .count() as u32;
    Some(LoopWork {
        pressure: Pressure {
            live: live[at],
            carried,
        },
        float_ops,
    })
}

/// Load groups (a warp reading each lane's row of 16 words, as in CSR
/// SpMV; see `lower::load_groups`) transpose 32 rows at 32 lanes: 2 KiB of
/// values at once, more than the room `pick` leaves in any register file
/// (all of AVX-512's, four times AVX2's), so the transposition spills. At
/// 16 lanes it is one 16 x 16 block. The SpMV benchmark: 7.5 -> 6.5 ms on
/// AVX2 (Zen 3); on AVX-512 (Zen 4) 0.79-0.84 of the time at 32 lanes,
/// faster in 14 of 14 interleaved rounds.
fn narrower_for_load_groups(w: u32, features: &str, groups: impl FnOnce() -> bool) -> u32 {
    // 32 lanes' rows of `ROW` 4-byte words.
    let transposed = 32 * crate::lower::ROW * 4;
    let room = register_file_bytes(features).0 * 3 / 4;
    if w == 32 && transposed > room && groups() {
        16
    } else {
        w
    }
}

/// Whether `p` accesses shared memory, directly or through a generic
/// address made from a shared one.
fn uses_shared(p: &Prepared) -> bool {
    p.func.blocks.values().flat_map(|b| &b.insts).any(|i| {
        matches!(
            i.kind,
            InstKind::Ld {
                space: Space::Shared,
                ..
            } | InstKind::St {
                space: Space::Shared,
                ..
            } | InstKind::Atom {
                space: Space::Shared,
                ..
            } | InstKind::Cvta {
                space: Space::Shared,
                ..
            }
        )
    })
}

/// `automatic`'s choice for a barrier-free kernel on a CPU with
/// `features`: 32 if it `shares` memory, else its loops' `pressure`
/// decides (only then worked out).
fn pick(shares: bool, pressure: impl FnOnce() -> Pressure, features: &str) -> u32 {
    if shares {
        return 32;
    }
    let Pressure { live, carried } = pressure();
    let (file, vreg) = register_file_bytes(features);
    let chains = |w: u32| carried * w / vreg >= 8;
    let fits = |w: u32| live * w <= file * 3 / 4;
    let enough: Vec<u32> = [32, 16, 8].into_iter().filter(|&w| chains(w)).collect();
    enough
        .iter()
        .copied()
        .find(|&w| fits(w))
        .or(enough.last().copied())
        .unwrap_or(32)
}

/// Bytes of the vector register file and of one register: 32 x 64 with
/// AVX-512, 16 x 32 with AVX, 16 x 16 with SSE.
fn register_file_bytes(features: &str) -> (u32, u32) {
    match widest_vectors(features) {
        "AVX-512" => (32 * 64, 64),
        "AVX2" | "AVX" => (16 * 32, 32),
        _ => (16 * 16, 16),
    }
}

/// The widest x86 vector instructions an LLVM feature string
/// (`+avx2,-avx512f,...`) enables.
pub(crate) fn widest_vectors(features: &str) -> &'static str {
    let has = |f: &str| features.split(',').any(|x| x.strip_prefix('+') == Some(f));
    if has("avx512f") {
        "AVX-512"
    } else if has("avx2") {
        "AVX2"
    } else if has("avx") {
        "AVX"
    } else if has("sse4.2") {
        "SSE4.2"
    } else if cfg!(target_arch = "x86_64") {
        "SSE2"
    } else {
        "no x86 vectors"
    }
}

/// Bytes per lane of vector registers live on entry to the loop block
/// where most are: all of them, and those the loop itself defines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pressure {
    pub live: u32,
    pub carried: u32,
}

/// Bytes per lane of each register (predicates: none, they are masks).
fn reg_bytes(f: &Function) -> Vec<u32> {
    f.regs
        .values()
        .map(|r| if r.ty == Ty::Pred { 0 } else { r.ty.bits() / 8 })
        .collect()
}

/// Bytes per lane of the vector registers (those without a lane form,
/// which are kept as scalars) live into block `b` that `keep` accepts.
fn vector_bytes_into(k: &Kernel, b: BlockId, bytes: &[u32], keep: impl Fn(usize) -> bool) -> u32 {
    let live_in = &k.liveness.live_in[b.0 as usize];
    (0..live_in.len())
        .filter(|&r| live_in[r] && k.forms.get(r).is_none_or(|f| f.is_none()) && keep(r))
        .map(|r| bytes[r])
        .sum()
}

/// The `Pressure` of kernel `k`'s loops (registers with a lane form are
/// kept as scalars and do not count).
pub fn loop_pressure(k: &Kernel) -> Pressure {
    let p = k.p;
    let f = &p.func;
    let in_loop = crate::emit::blocks_in_loops(p);
    let bytes = reg_bytes(f);
    let mut in_loop_def = vec![false; bytes.len()];
    for (id, b) in p.order.iter().enumerate() {
        if in_loop[id] {
            for i in &f.blocks[*b].insts {
                for r in crate::uniform::defs(&i.kind) {
                    in_loop_def[r.0 as usize] = true;
                }
            }
        }
    }
    p.order
        .iter()
        .enumerate()
        .filter(|(id, _)| in_loop[*id])
        .map(|(_, b)| Pressure {
            live: vector_bytes_into(k, *b, &bytes, |_| true),
            carried: vector_bytes_into(k, *b, &bytes, |r| in_loop_def[r]),
        })
        .max_by_key(|x| x.live)
        .unwrap_or_default()
}

/// The width `WARPFOLD_WARP_WIDTH` asks for (8, 16 or 32; anything else
/// is reported once and ignored).
pub fn requested() -> Option<u32> {
    static WANT: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *WANT.get_or_init(|| {
        let v = std::env::var("WARPFOLD_WARP_WIDTH").ok()?;
        match v.trim().parse::<u32>() {
            Ok(w) if WIDTHS.contains(&w) => Some(w),
            _ => {
                eprintln!("warpfold: WARPFOLD_WARP_WIDTH={v:?} is not 8, 16 or 32; ignored");
                None
            }
        }
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
                InstKind::ReadSpecial {
                    sreg:
                        Special::LaneId
                        | Special::WarpId
                        | Special::NWarpId
                        | Special::LaneMaskEq
                        | Special::LaneMaskLe
                        | Special::LaneMaskLt
                        | Special::LaneMaskGe
                        | Special::LaneMaskGt,
                    ..
                } => Some("a lane or warp id"),
                InstKind::Ld { volatile: true, .. } | InstKind::St { volatile: true, .. } => {
                    Some("volatile memory accesses (warp-synchronous code)")
                }
                InstKind::Atom { op, ty, dst, .. } => {
                    let commutes = matches!(
                        op,
                        AtomOp::Add
                            | AtomOp::Min
                            | AtomOp::Max
                            | AtomOp::And
                            | AtomOp::Or
                            | AtomOp::Xor
                    ) && !ty.is_float();
                    let shown = dst.is_some_and(|d| read[d.0 as usize]);
                    (!commutes || shown).then_some("atomics whose order shows")
                }
                InstKind::Fence => Some("memory fences"),
                InstKind::Bar { kind, .. }
                    if counted_barrier(&i.kind) || *kind != BarKind::Sync =>
                {
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

#[cfg(test)]
mod tests {
    use super::{between_barriers, narrower_for_load_groups, pick, LoopWork, Pressure};

    const AVX2: &str = "+avx,+avx2,+fma";
    const AVX512: &str = "+avx,+avx2,+fma,+avx512f";

    #[test]
    fn narrow_warps_only_where_loops_spill_and_chains_stay_independent() {
        // The benchmarks' loops (bytes per lane, live and carried).
        let fma = Pressure {
            live: 32,
            carried: 32,
        };
        let mandelbrot = Pressure {
            live: 28,
            carried: 20,
        };
        let three_chains = Pressure {
            live: 28,
            carried: 12,
        };
        let small = Pressure {
            live: 4,
            carried: 4,
        };
        assert_eq!(pick(false, || fma, AVX2), 8);
        assert_eq!(pick(false, || fma, AVX512), 32);
        assert_eq!(pick(false, || mandelbrot, AVX2), 16);
        assert_eq!(pick(false, || three_chains, AVX2), 32);
        assert_eq!(pick(false, || small, AVX2), 32);
        assert_eq!(pick(false, || Pressure::default(), AVX2), 32);
        // Shared memory keeps 32 lanes however many registers the loops
        // need.
        assert_eq!(pick(true, || fma, AVX2), 32);
        // SSE registers are half as wide: 8 lanes already spill there.
        assert_eq!(pick(false, || fma, "+sse4.2"), 8);
    }

    #[test]
    fn barrier_kernels_narrow_only_for_spilling_loops_with_work_besides_their_chains() {
        let work = |live, carried, float_ops| {
            Some(LoopWork {
                pressure: Pressure { live, carried },
                float_ops,
            })
        };
        // N-body's tile loop (NVRTC unrolls it four times): 24 bytes a
        // lane live, three sums carried, 120 float instructions a trip.
        assert_eq!(between_barriers(work(24, 12, 120), AVX2), 16);
        assert_eq!(between_barriers(work(24, 12, 120), AVX512), 32);
        // Twice the live bytes fit only at 8 lanes.
        assert_eq!(between_barriers(work(48, 12, 120), AVX2), 8);
        // Little work besides the chains: their latency needs 32 lanes.
        assert_eq!(between_barriers(work(24, 12, 11), AVX2), 32);
        // A loop that fits at 32 lanes, or none without a barrier in it
        // (a tree reduction's), keeps 32.
        assert_eq!(between_barriers(work(4, 4, 0), AVX2), 32);
        assert_eq!(between_barriers(None, AVX2), 32);
    }

    #[test]
    fn the_widest_vectors_are_read_from_enabled_features_only() {
        use super::widest_vectors;
        assert_eq!(
            widest_vectors("+sse4.2,+avx,+avx2,+fma,+avx512f"),
            "AVX-512"
        );
        // A feature turned off (`WARPFOLD_CPU` capping) does not count.
        assert_eq!(widest_vectors("+sse4.2,+avx,+avx2,-avx512f"), "AVX2");
        assert_eq!(widest_vectors("+sse4.2,+avx,-avx2,-avx512f"), "AVX");
        assert_eq!(widest_vectors("+sse4.2,-avx,-avx2"), "SSE4.2");
        assert_eq!(widest_vectors("+sse2"), "SSE2");
        // Names are whole: `+avx512fp16` alone is not `avx512f`.
        assert_eq!(widest_vectors("+avx2,+avx512fp16"), "AVX2");
        let t = crate::code_target();
        assert!(t.contains(", AVX") || t.contains(", SSE"), "{t}");
        assert!(t.ends_with(" MiB of cache"), "{t}");
    }

    #[test]
    fn load_groups_take_sixteen_lanes() {
        assert_eq!(narrower_for_load_groups(32, AVX2, || true), 16);
        assert_eq!(narrower_for_load_groups(32, "+sse4.2", || true), 16);
        assert_eq!(narrower_for_load_groups(32, AVX512, || true), 16);
        assert_eq!(narrower_for_load_groups(32, AVX2, || false), 32);
        // A width the loops chose already stays.
        assert_eq!(narrower_for_load_groups(8, AVX2, || true), 8);
    }
}
