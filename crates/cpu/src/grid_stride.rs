//! Grid-stride loops (`for (i = ...; i < n; i += gridDim.x * blockDim.x)`),
//! the common way a CUDA kernel covers more data than it has threads: each
//! trip of a warp reads the whole grid's width further on, megabytes away,
//! a stride the hardware prefetchers do not follow. Their global loads
//! prefetch by their stride (see `lower::prefetch_stride`).

use crate::prepare::Prepared;
use warpfold_ir::*;

/// What a register holds, as far as grid strides go.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    Other,
    /// `%ntid.x`.
    BlockWidth,
    /// `%nctaid.x`.
    GridWidth,
    /// Their product: the grid's threads in x.
    Threads,
    /// The grid's threads times a constant (bytes: an unrolled loop's
    /// pointer step).
    Scaled,
}

/// Per block id of `p`: the grid-stride steps the block makes, 0 unless it
/// lies on a loop (`in_loop`). A step is an add of the grid's threads in x
/// (`nctaid.x * ntid.x`, in either order, through copies) to another
/// register, in place or not: a loop NVRTC unrolled by 4 makes 4 a trip
/// (`i1 = i + s; i2 = i1 + s; ...`), each for its own load. Where no add
/// of the threads themselves is there, adds of the threads times a
/// constant count instead (an unrolled loop's pointers step by them in
/// bytes). Only registers with one unguarded definition hold the threads
/// (PTX registers may be written again).
pub(crate) fn grid_stride_blocks(p: &Prepared, in_loop: &[bool]) -> Vec<u32> {
    let f = &p.func;
    let n = f.regs.len();
    let mut defs = vec![0u32; n];
    let all = || p.order.iter().flat_map(|b| f.blocks[*b].insts.iter());
    for i in all() {
        for r in crate::uniform::defs(&i.kind) {
            defs[r.0 as usize] += 1;
        }
    }
    let single = |r: Reg| defs[r.0 as usize] == 1;
    let mut held = vec![Held::Other; n];
    let of = |held: &[Held], v: &Value| match v {
        Value::Reg(r) => held[r.0 as usize],
        _ => Held::Other,
    };
    // Copies may come before their source in block order: a few passes.
    for _ in 0..3 {
        for i in all().filter(|i| i.guard.is_none()) {
            let (dst, what) = match &i.kind {
                InstKind::ReadSpecial { dst, sreg } => (
                    *dst,
                    match sreg {
                        Special::Ntid(0) => Held::BlockWidth,
                        Special::Nctaid(0) => Held::GridWidth,
                        _ => Held::Other,
                    },
                ),
                InstKind::Mov { dst, src, .. } => (*dst, of(&held, src)),
                InstKind::Int {
                    op: IntOp::MulLo,
                    dst,
                    args,
                    ..
                } if args.len() == 2 => {
                    let pair = (of(&held, &args[0]), of(&held, &args[1]));
                    let threads = matches!(
                        pair,
                        (Held::BlockWidth, Held::GridWidth) | (Held::GridWidth, Held::BlockWidth)
                    );
                    let what = if threads {
                        Held::Threads
                    } else if scaled_threads(&held, args) {
                        Held::Scaled
                    } else {
                        Held::Other
                    };
                    (*dst, what)
                }
                // The grid's threads in bytes (`mul.wide.s32 %rd, %r, 4`):
                // an unrolled loop steps its pointers by them.
                InstKind::Int {
                    op: op @ (IntOp::MulWide | IntOp::Shl),
                    dst,
                    args,
                    ..
                } if args.len() == 2 => {
                    // `shl 4, s` shifts the constant, not the threads.
                    let scaled = scaled_threads(&held, args)
                        && (*op != IntOp::Shl || matches!(args[1], Value::Imm(_)));
                    (*dst, if scaled { Held::Scaled } else { Held::Other })
                }
                _ => continue,
            };
            if single(dst) {
                held[dst.0 as usize] = what;
            }
        }
    }
    p.order
        .iter()
        .enumerate()
        .map(|(id, b)| {
            if !in_loop[id] {
                return 0;
            }
            let adds = |what: Held| {
                f.blocks[*b]
                    .insts
                    .iter()
                    .filter(|i| match &i.kind {
                        InstKind::Int {
                            op: IntOp::Add,
                            args,
                            ..
                        } => match args.as_slice() {
                            // `threads - 1` or `i + total` with a constant
                            // is no step.
                            [a, b] => {
                                let reg = |v: &Value| matches!(v, Value::Reg(_));
                                (of(&held, a) == what && reg(b)) || (of(&held, b) == what && reg(a))
                            }
                            _ => false,
                        },
                        _ => false,
                    })
                    .count() as u32
            };
            match adds(Held::Threads) {
                0 => adds(Held::Scaled),
                n => n,
            }
        })
        .collect()
}

/// Whether `args` are the grid's threads (maybe scaled) and a constant.
fn scaled_threads(held: &[Held], args: &[Value]) -> bool {
    let threads = |v: &Value| matches!(v, Value::Reg(r) if matches!(held[r.0 as usize], Held::Threads | Held::Scaled));
    match args {
        [a, Value::Imm(_)] => threads(a),
        [Value::Imm(_), b] => threads(b),
        _ => false,
    }
}

/// Whether a warp can wait (at a barrier or a warp collective) in the loop
/// that the jump from block `latch` back to block `header` closes (ids of
/// `p`): there it can leave its warp function on every trip and start the
/// next call with a fresh yield budget, so a poll that reads the
/// watchdog's flag only when the budget runs out might never read it.
pub(crate) fn loop_may_wait(p: &Prepared, header: usize, latch: usize) -> bool {
    let (_, preds) = p.edges();
    // The natural loop: the header and whatever reaches the latch without
    // passing it.
    let mut seen = vec![false; preds.len()];
    seen[header] = true;
    let mut body = vec![header];
    let mut todo = vec![latch];
    while let Some(b) = todo.pop() {
        if std::mem::replace(&mut seen[b], true) {
            continue;
        }
        body.push(b);
        todo.extend(preds[b].iter().copied());
    }
    body.iter().any(|&b| {
        p.func.blocks[p.order[b]].insts.iter().any(|i| {
            crate::prepare::is_sync_point(&i.kind)
                || matches!(
                    i.kind,
                    InstKind::Call { .. } | InstKind::CallIndirect { .. }
                )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::grid_stride_blocks;

    /// Grid-stride steps per block of kernel `k`: `setup` before a loop
    /// whose trip is `body` (then `%r1 < %r5`, the parameter `n`).
    fn steps(setup: &str, body: &str) -> Vec<u32> {
        let src = format!(
            r#".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r5, [n];
    mov.u32 %r1, %tid.x;
{setup}
LOOP:
{body}
    setp.lt.s32 %p1, %r1, %r5;
    @%p1 bra LOOP;
    ret;
}}
"#
        );
        let p = crate::prepare::prepared(&src, "k");
        let in_loop = crate::emit::blocks_in_loops(&p);
        grid_stride_blocks(&p, &in_loop)
    }

    /// Kernel `k` whose loop adds `step` (PTX computing `%r4` from `%r2`
    /// and `%r3`) to its index: which blocks are grid-stride loops.
    fn marked(step: &str) -> Vec<bool> {
        let body = "    mul.wide.s32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r6, [%rd3];
    add.s32 %r1, %r1, %r4;";
        steps(step, body).into_iter().map(|s| s > 0).collect()
    }

    #[test]
    fn a_loop_stepping_by_the_grids_threads_in_x_is_a_grid_stride_loop() {
        for step in [
            "mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %nctaid.x;\n mul.lo.s32 %r4, %r2, %r3;",
            "mov.u32 %r2, %nctaid.x;\n mov.u32 %r3, %ntid.x;\n mul.lo.s32 %r7, %r2, %r3;\n mov.u32 %r4, %r7;",
        ] {
            let m = marked(step);
            assert_eq!(m.iter().filter(|b| **b).count(), 1, "{step}");
        }
    }

    #[test]
    fn other_steps_are_not() {
        for step in [
            // The block's width only.
            "mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %ntid.x;\n mov.u32 %r4, %r2;",
            // The grid's threads in y.
            "mov.u32 %r2, %ntid.y;\n mov.u32 %r3, %nctaid.y;\n mul.lo.s32 %r4, %r2, %r3;",
            // Written twice: not one known value.
            "mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %nctaid.x;\n mul.lo.s32 %r4, %r2, %r3;\n add.s32 %r4, %r4, 1;",
        ] {
            assert!(!marked(step).contains(&true), "{step}");
        }
    }

    /// A loop NVRTC unrolled by 4 (`for (i = ...; i < n; i += stride) s +=
    /// x[i];`): the index steps through copies, never in place, and its
    /// pointers by the threads in bytes. The steps count, so the warps
    /// take turns every 2 trips (8 steps) rather than every 8.
    #[test]
    fn an_unrolled_loop_makes_a_step_per_copy() {
        let setup = "    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %nctaid.x;
    mul.lo.s32 %r4, %r3, %r2;
    mul.wide.s32 %rd2, %r4, 4;";
        let most = |body: &str| steps(setup, body).into_iter().max().unwrap_or(0);
        let unrolled = "    mul.wide.s32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.s64 %rd5, %rd4, %rd2;
    ld.global.u32 %r7, [%rd5];
    add.s32 %r8, %r1, %r4;
    add.s32 %r9, %r8, %r4;
    add.s64 %rd6, %rd5, %rd2;
    ld.global.u32 %r10, [%rd6];
    add.s32 %r11, %r9, %r4;
    add.s64 %rd7, %rd6, %rd2;
    ld.global.u32 %r12, [%rd7];
    add.s32 %r1, %r11, %r4;";
        assert_eq!(most(unrolled), 4);
        // Only a pointer stepping by the threads in bytes.
        let pointer = "    ld.global.u32 %r6, [%rd1];
    add.s64 %rd1, %rd1, %rd2;
    add.s32 %r1, %r1, 1;";
        assert_eq!(most(pointer), 1);
        // The threads plus a constant, a constant shifted by them: no step.
        let other = "    add.s32 %r6, %r4, -1;
    shl.b32 %r7, 4, %r4;
    add.s32 %r8, %r1, %r7;
    mul.wide.s32 %rd3, %r6, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r9, [%rd4];
    add.s32 %r1, %r1, 1;";
        assert_eq!(most(other), 0);
    }
}
