//! A CTA's warps in step round long loops.
//!
//! A CTA runs on one core and, without barriers, each of its warps runs to
//! its end before the next starts. A 3-D stencil that gives each warp a row
//! and marches it along z then has each warp read its neighbours' rows
//! (`in[i ± nx]`) a whole march after, or before, they did: from L2 or L3,
//! where in step they would still be in L1. A CTA barrier on the way back
//! round such a loop makes the warps take turns trip by trip (the region
//! machinery runs every warp to the barrier, then the next trip). On the
//! Xeon VM, the suite's stencil with the barrier in its PTX by hand (NVRTC
//! unrolls the march by four, so a turn is four trips): single core 1.32
//! -> 1.06 ms (best of ten interleaved runs; medians 1.53 -> 1.13), both
//! cores 1.00 -> 0.62 ms (medians 1.09 -> 0.76); with this pass, both
//! cores 0.79 -> 0.65 ms (medians 0.85 -> 0.67). A barrier every trip
//! cost more than it saved, every two trips gained less than every four,
//! and a turn round a loop with little to read a trip costs more than it
//! saves: a column sum (one load a trip, unrolled four times) ran 1.5x
//! slower in step, hence `MIN_LOADS`.
//!
//! The barrier changes which orders of the threads' steps are possible,
//! never what a kernel computes, as long as no thread waits for another:
//! the kernel has no barrier, warp collective, atomic, volatile access,
//! fence, trap, printf or call of its own (a thread spinning on a flag
//! another thread sets after the loop would otherwise wait for ever), and
//! no lane is held back by the barrier without ever arriving: compiled
//! code waits at a barrier a warp at a time, so lanes of the warp that are
//! elsewhere (out of the loop early, or turned away by a branch on a
//! per-thread value) would wait with it for ever; exited threads do not
//! count. Hence every exit of the loop is a branch on values the same in
//! every thread of the CTA, and every thread reaches the loop with its
//! warp or ends (see `reached_together`). The loop is innermost and reads
//! global memory at addresses that differ between threads at least
//! `MIN_LOADS` times a trip (loads every thread makes alike, as in an
//! all-pairs loop over bodies, are in L1 for every warp anyway), and the
//! CTA has more than one warp. One loop per kernel, the one that reads
//! most: threads waiting at two barriers at once (in loops on the two
//! sides of a branch) would be an error.
//! `WARPFOLD_LOCKSTEP=off` turns this off.

use crate::dom::Dominators;
use crate::prepare::Prepared;
use crate::uniform::{defs, partial_def, uniform_operands};
use warpfold_ir::*;

thread_local! {
    /// Loops this thread's compilations put in step (for tests).
    pub(crate) static IN_STEP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Global loads of per-thread addresses a trip must make for the loop to
/// take turns: the stencil makes 28 (seven a trip, unrolled four times).
const MIN_LOADS: usize = 16;

/// Whether `WARPFOLD_LOCKSTEP` leaves this on (read once).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WARPFOLD_LOCKSTEP").map_or(true, |v| v != "off"))
}

/// Put a CTA barrier on the back edge of the loop of `p` that qualifies
/// (see the module comment), for CTAs of `threads` threads; the number of
/// loops changed (0 or 1).
pub(crate) fn take_turns(p: &mut Prepared, m: &Module, threads: u32) -> usize {
    if !enabled() || threads <= 32 {
        return 0;
    }
    // As blocks: each barrier moves the ids of the blocks after it.
    let edges: Vec<(BlockId, BlockId)> = back_edges_to_step(p, m)
        .into_iter()
        .map(|(u, h)| (p.order[u], p.order[h]))
        .collect();
    for &(latch, header) in &edges {
        add_barrier(p, latch, header);
    }
    edges.len()
}

/// Instructions that make this transformation unsafe or pointless.
fn waits_or_orders(i: &Inst) -> bool {
    if crate::prepare::is_sync_point(&i.kind) {
        return true;
    }
    match &i.kind {
        InstKind::Activemask { .. }
        | InstKind::Atom { .. }
        | InstKind::Fence
        | InstKind::Trap
        | InstKind::Builtin { .. }
        | InstKind::Call { .. }
        | InstKind::CallIndirect { .. } => true,
        InstKind::Ld { volatile, .. } | InstKind::St { volatile, .. } => *volatile,
        _ => false,
    }
}

/// The (latch, header) block ids of the back edges that get a barrier.
fn back_edges_to_step(p: &Prepared, m: &Module) -> Vec<(usize, usize)> {
    let f = &p.func;
    let block = |id: usize| &f.blocks[p.order[id]];
    if p.order
        .iter()
        .any(|b| f.blocks[*b].insts.iter().any(waits_or_orders))
    {
        return Vec::new();
    }
    let n = p.order.len();
    let (succs, preds) = p.edges();
    let dom = Dominators::new(n, 0, &|b| succs[b].clone());
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for (u, ss) in succs.iter().enumerate() {
        for &h in ss {
            if dom.reachable(u) && dom.dominates(h, u) {
                edges.push((u, h));
            }
        }
    }
    let headers: Vec<usize> = edges.iter().map(|e| e.1).collect();
    // Where each register is defined (block id, instruction).
    let mut sites: Vec<Vec<(usize, &Inst)>> = vec![Vec::new(); f.regs.len()];
    for (id, b) in p.order.iter().enumerate() {
        for i in &f.blocks[*b].insts {
            for r in defs(&i.kind) {
                sites[r.0 as usize].push((id, i));
            }
        }
    }
    let uniform_at = |latch: usize| cta_uniform(m, &sites, &dom, &preds, latch);
    // One barrier for the whole kernel: threads waiting at two (in loops on
    // the two sides of a branch) would be an error.
    edges
        .iter()
        .copied()
        .filter_map(|(u, h)| {
            // One way back round the loop.
            if headers.iter().filter(|&&x| x == h).count() != 1 {
                return None;
            }
            let body = natural_loop(&preds, u, h);
            // Innermost, and no cycle inside the trip that is not a loop of
            // its own (entered in two places): a block that dominates the
            // latch then runs once a trip, as `cta_uniform` assumes.
            if headers.iter().any(|&x| x != h && body[x]) || !one_pass(&succs, &body, h) {
                return None;
            }
            // Loads of each thread's own data: what the warps share (the
            // count of all loads first: the uniformity is a fixpoint).
            let global_loads = || {
                (0..n).filter(|&b| body[b]).flat_map(|b| {
                    block(b).insts.iter().filter_map(|i| match &i.kind {
                        InstKind::Ld {
                            space: Space::Global | Space::Generic,
                            addr,
                            ..
                        } => Some(addr.base),
                        _ => None,
                    })
                })
            };
            if global_loads().count() < MIN_LOADS {
                return None;
            }
            let uniform = uniform_at(u);
            let loads = global_loads()
                .filter(|a| matches!(a, AddrBase::Reg(r) if !uniform[r.0 as usize]))
                .count();
            if loads < MIN_LOADS {
                return None;
            }
            // Every way out is a branch on a CTA-wide value in a block
            // every thread runs each trip (one a branch inside the trip
            // skips would let those lanes stay when the others leave).
            let even = (0..n).filter(|&b| body[b]).all(|b| {
                let leaves = succs[b].iter().any(|&s| !body[s]);
                match &block(b).term {
                    // A thread that ends inside the loop leaves it early.
                    Some(Terminator::Exit | Terminator::Return) | None => false,
                    _ if !leaves => true,
                    Some(Terminator::Branch { pred, .. }) => {
                        uniform[pred.0 as usize] && dom.dominates(b, u)
                    }
                    Some(Terminator::Jump(_)) => true,
                }
            });
            let ends = |b: usize| {
                matches!(
                    block(b).term,
                    Some(Terminator::Exit | Terminator::Return) | None
                )
            };
            let alike = |b: usize| match &block(b).term {
                Some(Terminator::Branch { pred, .. }) => uniform[pred.0 as usize],
                _ => true,
            };
            (even && reached_together(&succs, &preds, &body, h, &alike, &ends))
                .then_some((loads, u, h))
        })
        .max_by_key(|&(loads, u, _)| (loads, std::cmp::Reverse(u)))
        .map(|(_, u, h)| (u, h))
        .into_iter()
        .collect()
}

/// Whether every thread that does not end first reaches `header` with
/// the rest of its warp: each branch on the way (or on the way round an
/// enclosing loop) that not all threads of the CTA take alike ends the
/// threads it turns away (`if (x >= nx) return;`). Lanes turned away
/// elsewhere, even to come back in the next trip of an enclosing loop,
/// wait behind their warp's lanes at the barrier for ever (random kernels
/// found both: a loop inside a branch inside loops of per-lane trip
/// counts, and one inside a branch inside a loop every thread runs).
fn reached_together(
    succs: &[Vec<usize>],
    preds: &[Vec<usize>],
    body: &[bool],
    header: usize,
    alike: &dyn Fn(usize) -> bool,
    ends: &dyn Fn(usize) -> bool,
) -> bool {
    let reaches = reaching(preds, header, None);
    (0..succs.len())
        .filter(|&b| reaches[b] && !body[b])
        .all(|b| {
            let away: Vec<usize> = succs[b].iter().copied().filter(|&s| !reaches[s]).collect();
            alike(b) || (!away.is_empty() && away.iter().all(|&s| ends(s)))
        })
}

/// Whether the blocks of `body` form no cycle but through `header`.
fn one_pass(succs: &[Vec<usize>], body: &[bool], header: usize) -> bool {
    // Depth-first search for a back edge (to a block on the stack).
    let n = succs.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut stack = vec![(header, 0usize)];
    state[header] = 1;
    while let Some((b, i)) = stack.pop() {
        let next = succs[b]
            .iter()
            .copied()
            .filter(|&s| body[s] && s != header)
            .nth(i);
        match next {
            Some(s) => {
                stack.push((b, i + 1));
                match state[s] {
                    0 => {
                        state[s] = 1;
                        stack.push((s, 0));
                    }
                    1 => return false,
                    _ => {}
                }
            }
            None => state[b] = 2,
        }
    }
    true
}

/// The blocks of the natural loop of back edge `latch` -> `header`.
pub(crate) fn natural_loop(preds: &[Vec<usize>], latch: usize, header: usize) -> Vec<bool> {
    reaching(preds, latch, Some(header))
}

/// The blocks from which `to` can be reached (`to` included), walking
/// back no further than `stop` (included when reached).
fn reaching(preds: &[Vec<usize>], to: usize, stop: Option<usize>) -> Vec<bool> {
    let mut seen = vec![false; preds.len()];
    if let Some(s) = stop {
        seen[s] = true;
    }
    let mut stack = vec![to];
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut seen[b], true) {
            stack.extend(preds[b].iter().copied());
        }
    }
    seen
}

/// Per register: whether every thread of the CTA that reaches block
/// `latch` holds the same value in it there. Optimistic, then refuted to
/// a fixpoint (loop counters depend on themselves): a register is not
/// when one of its definitions is guarded, reads a lane's identity or
/// memory other than parameters and constants, reads a register that is
/// not, or lies where a thread on its way to `latch` may or may not run it
/// (it neither dominates `latch` nor is unable to reach it: a definition
/// after the loop, as of a remainder loop's counter, does not count).
fn cta_uniform(
    m: &Module,
    sites: &[Vec<(usize, &Inst)>],
    dom: &Dominators,
    preds: &[Vec<usize>],
    latch: usize,
) -> Vec<bool> {
    let reaches = reaching(preds, latch, None);
    let mut uniform = vec![true; sites.len()];
    loop {
        let mut changed = false;
        for r in 0..uniform.len() {
            if !uniform[r] {
                continue;
            }
            let ok = sites[r].iter().all(|&(id, i)| {
                let placed = !reaches[id] || (dom.reachable(id) && dom.dominates(id, latch));
                let warp_id = matches!(
                    i.kind,
                    InstKind::ReadSpecial {
                        sreg: Special::WarpId,
                        ..
                    }
                );
                placed
                    && !partial_def(i)
                    && !warp_id
                    && uniform_operands(m, &i.kind).is_some_and(|ops| {
                        ops.iter().all(|v| match v {
                            Value::Reg(x) => uniform[x.0 as usize],
                            _ => true,
                        })
                    })
            });
            if !ok {
                uniform[r] = false;
                changed = true;
            }
        }
        if !changed {
            return uniform;
        }
    }
}

/// A block holding only `bar.sync 0` on the edge `latch` -> `header`,
/// placed right after the latch in the order.
fn add_barrier(p: &mut Prepared, lb: BlockId, hb: BlockId) {
    let latch = p.id_of[lb.0 as usize] as usize;
    let loc = p.func.blocks[lb]
        .insts
        .last()
        .map_or(SrcLoc { line: 0, col: 0 }, |i| i.loc);
    let bar = p.func.blocks.push(Block {
        name: None,
        insts: vec![Inst {
            kind: InstKind::Bar {
                kind: BarKind::Sync,
                id: Value::Imm(0),
                count: None,
                dst: None,
                pred: None,
            },
            guard: None,
            loc,
        }],
        term: Some(Terminator::Jump(hb)),
    });
    let redirect = |t: &mut BlockId| {
        if *t == hb {
            *t = bar;
        }
    };
    match &mut p.func.blocks[lb].term {
        Some(Terminator::Jump(t)) => redirect(t),
        Some(Terminator::Branch { then, els, .. }) => {
            redirect(then);
            redirect(els);
        }
        _ => {}
    }
    p.order.insert(latch + 1, bar);
    p.id_of = vec![u32::MAX; p.func.blocks.len()];
    for (i, b) in p.order.iter().enumerate() {
        p.id_of[b.0 as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = include_str!("../../runtime/tests/kernels/lockstep.ptx");

    /// Kernel `name` prepared and put in step for CTAs of `threads`.
    fn stepped(name: &str, threads: u32) -> (Prepared, usize) {
        let m = warpfold_ptx::load(SRC).expect("parses");
        let mut p = crate::prepare::prepared(SRC, name);
        let n = take_turns(&mut p, &m, threads);
        (p, n)
    }

    #[test]
    fn a_column_march_gets_a_barrier_on_its_way_back() {
        let (p, n) = stepped("march", 256);
        assert_eq!(n, 1);
        // Alone in its block, which jumps to the loop's header, and the
        // block before it in the order is the latch that branches to it.
        let bars: Vec<_> = p.barriers().collect();
        assert_eq!(bars.len(), 1);
        let header = bars[0].1;
        let at = p
            .order
            .iter()
            .position(|b| {
                matches!(
                    p.func.blocks[*b].insts.first().map(|i| &i.kind),
                    Some(InstKind::Bar { .. })
                )
            })
            .expect("barrier block");
        let bar = p.order[at];
        let latch = &p.func.blocks[p.order[at - 1]];
        assert!(crate::lanes::succs(latch).contains(&bar));
        assert!(!crate::lanes::succs(latch).contains(&header));
        assert!(
            p.id_of[header.0 as usize] < at as u32,
            "back to an earlier block"
        );
        assert!(p
            .order
            .iter()
            .enumerate()
            .all(|(i, b)| p.id_of[b.0 as usize] == i as u32));
    }

    #[test]
    fn a_march_some_threads_skip_without_ending_does_not() {
        // The even lanes would wait behind their warp's odd ones at the
        // barrier (a random kernel with the loop inside loops of per-lane
        // trip counts never finished); threads that end are fine.
        assert_eq!(stepped("march_odd_columns", 256).1, 0);
        assert_eq!(stepped("march", 256).1, 1);
    }

    #[test]
    fn one_warp_ctas_have_no_turns_to_take() {
        assert_eq!(stepped("march", 32).1, 0);
    }

    #[test]
    fn per_thread_depths_atomics_and_light_loops_stay_as_they_are() {
        for name in [
            "march_own_depth",
            "march_counting",
            "march_light",
            "march_odd_columns",
        ] {
            let (p, n) = stepped(name, 256);
            assert_eq!(n, 0, "{name}");
            assert_eq!(p.barriers().count(), 0, "{name}");
        }
    }

    /// A loop of `body` (16 per-thread loads first) in a kernel of its own.
    fn hand_written(body: &str) -> String {
        format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<20>;\n  .reg .pred %p<4>;\n  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd1, %rd1, %rd3;\n  add.s64 %rd2, %rd2, %rd3;\n  mov.u32 %r2, 0;\n  mov.u32 %r3, 0;\n$H:\nLOADS{body}$OUT:\n  st.global.f32 [%rd2], %f1;\n  ret;\n}}\n"
        )
        .replace("LOADS", "  ld.global.f32 %f0, [%rd1+0];\n  ld.global.f32 %f1, [%rd1+4];\n  ld.global.f32 %f2, [%rd1+8];\n  ld.global.f32 %f3, [%rd1+12];\n  ld.global.f32 %f4, [%rd1+16];\n  ld.global.f32 %f5, [%rd1+20];\n  ld.global.f32 %f6, [%rd1+24];\n  ld.global.f32 %f7, [%rd1+28];\n  ld.global.f32 %f8, [%rd1+32];\n  ld.global.f32 %f9, [%rd1+36];\n  ld.global.f32 %f10, [%rd1+40];\n  ld.global.f32 %f11, [%rd1+44];\n  ld.global.f32 %f12, [%rd1+48];\n  ld.global.f32 %f13, [%rd1+52];\n  ld.global.f32 %f14, [%rd1+56];\n  ld.global.f32 %f15, [%rd1+60];\n")
    }

    fn turns_of(src: &str) -> usize {
        let m = warpfold_ptx::load(src).expect("parses");
        let mut p = crate::prepare::prepared(src, "k");
        take_turns(&mut p, &m, 64)
    }

    #[test]
    fn an_exit_only_some_lanes_pass_each_trip_keeps_the_loop_out() {
        // Lanes 16 and up skip the block that leaves on trip 50.
        let body = "  setp.eq.u32 %p2, %r2, 50;\n  setp.ge.u32 %p1, %r1, 16;\n  @%p1 bra $L;\n  @%p2 bra $OUT;\n$L:\n  add.u32 %r2, %r2, 1;\n  add.s64 %rd1, %rd1, 64;\n  setp.lt.u32 %p3, %r2, 100;\n  @%p3 bra $H;\n";
        assert_eq!(turns_of(&hand_written(body)), 0);
        // The same exit in the latch, which every lane runs: in step.
        let body = "  setp.eq.u32 %p2, %r2, 50;\n  setp.ge.u32 %p1, %r1, 16;\n  @%p1 bra $L;\n  add.f32 %f1, %f1, %f2;\n$L:\n  add.u32 %r2, %r2, 1;\n  add.s64 %rd1, %rd1, 64;\n  setp.lt.u32 %p3, %r2, 100;\n  @%p3 bra $H;\n";
        assert_eq!(turns_of(&hand_written(body)), 1);
    }

    #[test]
    fn a_cycle_entered_in_two_places_inside_the_trip_keeps_the_loop_out() {
        // D and E call each other a per-lane number of times; D dominates
        // the latch but does not run once a trip.
        let body = "  setp.lt.u32 %p1, %r1, 16;\n  @%p1 bra $E;\n$D:\n  add.u32 %r2, %r2, 1;\n  add.u32 %r3, %r3, 1;\n  setp.lt.u32 %p2, %r3, %r1;\n  @%p2 bra $E;\n  add.s64 %rd1, %rd1, 64;\n  setp.lt.u32 %p3, %r2, 100;\n  @%p3 bra $H;\n  bra $OUT;\n$E:\n  bra $D;\n";
        assert_eq!(turns_of(&hand_written(body)), 0);
    }
}
