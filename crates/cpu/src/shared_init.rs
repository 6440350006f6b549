//! Kernels whose CTAs write all of their shared memory before reading any.
//!
//! The driver clears a CTA's shared memory before the CTA starts, so that
//! a kernel reading shared memory no thread wrote sees zeros, as on the
//! interpreter. For a CTA that does little the clear is much of its cost:
//! clearing 1 KiB (libc's memset) took 8.5 of the 32 ns of a CTA of 256
//! threads that each store a word, wait at a barrier and read one, and
//! 16% of the block reduction's samples in compiled code. Most kernels that
//! use shared memory begin by storing each thread's element
//! (`s[threadIdx.x] = x`) and read only after a barrier: then no read can
//! see what the clear wrote, and the driver skips it.
//!
//! The test is conservative. A one-dimensional block; one static shared
//! variable of at most 4 bytes a thread (and no dynamic shared memory,
//! which the launch checks); an unguarded 4-byte store to
//! `variable + 4 * %tid.x` in a block that every path from the kernel's
//! entry to a barrier or an exit goes through; no load, atomic or call
//! that could read shared memory (shared or generic accesses) anywhere on
//! the way from the entry to the first barriers. Each barrier there must
//! wait for the whole CTA (`bar.sync`/`bar.red` without a thread count).
//! Every thread has then stored its word before any thread passes its
//! first barrier, and every read of shared memory comes after one.

use crate::prepare::Prepared;
use warpfold_ir::shared::SharedLayout;
use warpfold_ir::*;

/// Whether every CTA of `p`, run in blocks of `shape`, writes each byte of
/// its static shared memory (`layout`) before any thread reads one (see
/// the module comment).
pub(crate) fn written_before_read(p: &Prepared, layout: &SharedLayout, shape: [u32; 3]) -> bool {
    if shape[1] != 1 || shape[2] != 1 {
        return false;
    }
    if layout.offsets.len() != 1 {
        return false;
    }
    let Some((&var, &0)) = layout.offsets.iter().next() else {
        return false;
    };
    // The padding up to dynamic shared memory is in the CTA's window too.
    if layout.dynamic_base() > 4 * u64::from(shape[0]) {
        return false;
    }
    let f = &p.func;
    let Some((region, _)) = before_barriers(p, None) else {
        return false;
    };
    // Nothing on the way to the first barriers may read shared memory.
    let reads = region.iter().any(|&b| {
        f.blocks[b].insts.iter().any(|i| match &i.kind {
            InstKind::Ld { space, .. } | InstKind::Atom { space, .. } => {
                matches!(space, Space::Shared | Space::Generic)
            }
            // printf and assert read memory through generic pointers.
            InstKind::Call { .. } | InstKind::CallIndirect { .. } | InstKind::Builtin { .. } => {
                true
            }
            _ => false,
        })
    });
    if reads {
        return false;
    }
    let forms = Forms::new(f);
    region.iter().any(|&b| {
        let stores = f.blocks[b].insts.iter().enumerate().any(|(k, i)| match &i.kind {
            InstKind::St {
                space: Space::Shared,
                ty,
                srcs,
                addr,
                ..
            } => {
                i.guard.is_none()
                    && ty.bits() == 32
                    && srcs.len() == 1
                    && addr.offset == 0
                    && matches!(addr.base, AddrBase::Reg(r) if forms.of(r, (b, k)) == Some(Form { var: Some(var), tid: 4, c: 0 }))
            }
            _ => false,
        });
        stores && every_path_passes(p, b)
    })
}

/// Where a thread can go from the entry up to its first barrier, never
/// entering block `avoid`: the blocks it runs, and whether it can reach a
/// barrier or its end that way; `None` when a barrier on the way does not
/// wait for the whole CTA.
fn before_barriers(p: &Prepared, avoid: Option<BlockId>) -> Option<(Vec<BlockId>, bool)> {
    let f = &p.func;
    let mut seen = vec![false; f.blocks.len()];
    let mut todo = vec![f.entry];
    let (mut blocks, mut out) = (Vec::new(), false);
    while let Some(b) = todo.pop() {
        if Some(b) == avoid || std::mem::replace(&mut seen[b.0 as usize], true) {
            continue;
        }
        let block = &f.blocks[b];
        if let Some(InstKind::Bar { kind, count, .. }) = block.insts.first().map(|i| &i.kind) {
            match (kind, count) {
                (BarKind::Sync | BarKind::Red(_), None) => {
                    out = true;
                    continue;
                }
                _ => return None,
            }
        }
        let next = crate::lanes::succs(block);
        out |= next.is_empty();
        blocks.push(b);
        todo.extend(next);
    }
    Some((blocks, out))
}

/// Whether every path from the entry to a barrier or to the end of the
/// thread goes through block `via`.
fn every_path_passes(p: &Prepared, via: BlockId) -> bool {
    before_barriers(p, Some(via)).is_some_and(|(_, out)| !out)
}

/// A value as `var + tid * %tid.x + c` (`var`: the address of a shared
/// variable).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Form {
    var: Option<GlobalId>,
    tid: i64,
    c: i64,
}

/// Largest coefficient or constant a form keeps: with `%tid.x` below 1024
/// every value stays below 2^27, so no 32-bit operation wraps and widening
/// keeps it.
const LIMIT: i64 = 1 << 16;

/// The forms of registers with one unguarded definition, each read where
/// that definition has run: in a block it dominates, or later in its own.
struct Forms<'a> {
    def: Vec<Option<(BlockId, usize, &'a Inst)>>,
    dom: crate::dom::Dominators,
}

impl<'a> Forms<'a> {
    fn new(f: &'a Function) -> Forms<'a> {
        let mut count = vec![0u32; f.regs.len()];
        let mut def = vec![None; f.regs.len()];
        for (b, block) in f.blocks.iter() {
            for (k, i) in block.insts.iter().enumerate() {
                for r in crate::uniform::defs(&i.kind) {
                    count[r.0 as usize] += 1;
                    def[r.0 as usize] = Some((b, k, i));
                }
            }
        }
        for (d, n) in def.iter_mut().zip(&count) {
            if *n != 1 || d.is_some_and(|(_, _, i)| i.guard.is_some()) {
                *d = None;
            }
        }
        let succs = |b: usize| -> Vec<usize> {
            crate::lanes::succs(&f.blocks[BlockId(b as u32)])
                .iter()
                .map(|s| s.0 as usize)
                .collect()
        };
        let dom = crate::dom::Dominators::new(f.blocks.len(), f.entry.0 as usize, &succs);
        Forms { def, dom }
    }

    /// The form of register `r` as read by instruction `at` (block, index).
    fn of(&self, r: Reg, at: (BlockId, usize)) -> Option<Form> {
        self.form(Value::Reg(r), at, 0)
    }

    fn form(&self, v: Value, at: (BlockId, usize), depth: u32) -> Option<Form> {
        let r = match v {
            Value::Imm(c) => {
                let c = i64::try_from(c).ok().filter(|c| *c < LIMIT)?;
                return Some(Form {
                    var: None,
                    tid: 0,
                    c,
                });
            }
            Value::Reg(r) => r,
        };
        if depth > 16 {
            return None;
        }
        let (db, dk, inst) = self.def.get(r.0 as usize).copied().flatten()?;
        let before = if db == at.0 {
            dk < at.1
        } else {
            self.dom.dominates(db.0 as usize, at.0 .0 as usize)
        };
        if !before {
            return None;
        }
        let sub = |v: Value| self.form(v, (db, dk), depth + 1);
        // Operations narrower than 32 bits could wrap or truncate.
        let wide = |ty: &Ty| ty.is_int() && ty.bits() >= 32;
        let form = match &inst.kind {
            InstKind::ReadSpecial {
                sreg: Special::Tid(0),
                ..
            } => Form {
                var: None,
                tid: 1,
                c: 0,
            },
            InstKind::AddrOf {
                sym: Symbol::Global(g),
                space: Space::Shared,
                ..
            } => Form {
                var: Some(*g),
                tid: 0,
                c: 0,
            },
            InstKind::Mov { ty, src, .. } if ty.bits() >= 32 => sub(*src)?,
            // Widening a non-negative value (below 2^27) keeps it.
            InstKind::Cvt {
                dst_ty,
                src_ty,
                src,
                ..
            } if wide(dst_ty) && wide(src_ty) && dst_ty.bits() >= src_ty.bits() => {
                let x = sub(*src)?;
                (x.var.is_none() && x.tid >= 0 && x.c >= 0).then_some(x)?
            }
            InstKind::Int {
                op: IntOp::Add,
                ty,
                args,
                ..
            } if args.len() == 2 && wide(ty) => {
                let (a, b) = (sub(args[0])?, sub(args[1])?);
                if a.var.is_some() && b.var.is_some() {
                    return None;
                }
                Form {
                    var: a.var.or(b.var),
                    tid: a.tid + b.tid,
                    c: a.c + b.c,
                }
            }
            // A small non-negative value scaled by a constant.
            InstKind::Int { op, ty, args, .. }
                if args.len() == 2
                    && wide(ty)
                    && matches!(op, IntOp::MulLo | IntOp::MulWide | IntOp::Shl) =>
            {
                let (x, k) = match (args[0], args[1]) {
                    (x, Value::Imm(k)) => (sub(x)?, k),
                    (Value::Imm(k), x) if *op != IntOp::Shl => (sub(x)?, k),
                    _ => return None,
                };
                let k = match op {
                    IntOp::Shl if k < 16 => 1i64 << k,
                    IntOp::Shl => return None,
                    _ => i64::try_from(k).ok().filter(|k| *k < LIMIT)?,
                };
                if x.var.is_some() || x.tid < 0 || x.c < 0 {
                    return None;
                }
                Form {
                    var: None,
                    tid: x.tid * k,
                    c: x.c * k,
                }
            }
            _ => return None,
        };
        (form.tid.abs() < LIMIT && form.c.abs() < LIMIT).then_some(form)
    }
}

#[cfg(test)]
mod tests {
    use super::written_before_read;

    /// Whether kernel `k` (the PTX body `body`, with shared array `s` of
    /// `bytes` bytes) writes its shared memory first, in blocks of `x`
    /// threads.
    fn first(body: &str, bytes: u32, x: u32) -> bool {
        first_in(body, bytes, [x, 1, 1])
    }

    fn first_in(body: &str, bytes: u32, shape: [u32; 3]) -> bool {
        let src = format!(
            r#".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<12>;
    .shared .align 4 .b8 s[{bytes}];
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r5, [n];
    mov.u32 %r1, %tid.x;
{body}
    ret;
}}
"#
        );
        let (m, k, p) = crate::prepare::prepared_in(&src, "k");
        let layout = warpfold_ir::shared::shared_layout(&m, k);
        written_before_read(&p, &layout, shape)
    }

    /// `s[tid.x] = in[tid.x]` or 0 past `n` (the store after the branch),
    /// a barrier, then a read of a neighbour's word.
    const SCAN_START: &str = "
    setp.ge.s32 %p1, %r1, %r5;
    mov.f32 %f1, 0f00000000;
    @%p1 bra JOIN;
    mul.wide.s32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %f1, [%rd3];
JOIN:
    mul.wide.s32 %rd4, %r1, 4;
    mov.u64 %rd5, s;
    add.s64 %rd6, %rd5, %rd4;
    st.shared.f32 [%rd6], %f1;
    bar.sync 0;
    ld.shared.f32 %f2, [%rd6+4];
    st.global.f32 [%rd3], %f2;";

    /// `SCAN_START` with `from` replaced by `to` (which must be there).
    fn edit(from: &str, to: &str) -> String {
        edit_of(SCAN_START, from, to)
    }

    fn edit_of(src: &str, from: &str, to: &str) -> String {
        assert!(src.contains(from), "{from:?}");
        src.replace(from, to)
    }

    #[test]
    fn each_thread_storing_its_word_before_the_barrier_writes_it_all() {
        assert!(first(SCAN_START, 1024, 256));
        // Fewer bytes than threads' words, too.
        assert!(first(SCAN_START, 512, 256));
    }

    #[test]
    fn a_read_a_skipped_store_or_a_partial_barrier_keeps_the_clear() {
        // More shared memory than the threads' words.
        assert!(!first(SCAN_START, 1028, 256));
        // Not one-dimensional.
        assert!(!first_in(SCAN_START, 1024, [128, 2, 1]));
        // A read before the barrier.
        let early = edit(
            "st.shared.f32 [%rd6], %f1;",
            "ld.shared.f32 %f3, [%rd6+4];\n    st.shared.f32 [%rd6], %f3;",
        );
        assert!(!first(&early, 1024, 256));
        // A generic load before the barrier (it could be shared memory).
        let generic = edit("ld.global.f32 %f1", "ld.f32 %f1");
        assert!(!first(&generic, 1024, 256));
        // The store only on one side of the branch.
        let guarded = edit("JOIN:\n    mul.wide.s32 %rd4", "    mul.wide.s32 %rd4");
        let guarded = edit_of(&guarded, "bar.sync 0;", "JOIN:\n    bar.sync 0;");
        assert!(!first(&guarded, 1024, 256));
        // A guarded store.
        let pred = edit("st.shared.f32 [%rd6]", "@%p1 st.shared.f32 [%rd6]");
        assert!(!first(&pred, 1024, 256));
        // Threads leaving before the store.
        let exit = edit("JOIN:\n", "JOIN:\n    @%p1 ret;\n");
        assert!(!first(&exit, 1024, 256));
        // Another thread's word.
        let other = edit(
            "mul.wide.s32 %rd4, %r1, 4;",
            "add.s32 %r2, %r1, 1;\n    mul.wide.s32 %rd4, %r2, 4;",
        );
        assert!(!first(&other, 1024, 256));
        // Two bytes a thread.
        let half = edit("mul.wide.s32 %rd4, %r1, 4;", "mul.wide.s32 %rd4, %r1, 2;");
        assert!(!first(&half, 1024, 256));
        // A barrier for some threads only.
        let counted = edit("bar.sync 0;", "bar.sync 0, 128;");
        assert!(!first(&counted, 1024, 256));
        // A barrier before the store.
        let late = edit("JOIN:\n", "JOIN:\n    bar.sync 0;\n");
        assert!(!first(&late, 1024, 256));
        // The index defined on one side of the branch only (threads that
        // skip it read the register as 0 and all store word 0).
        let one_side = edit(
            "    mul.wide.s32 %rd2, %r1, 4;",
            "    mov.u32 %r2, %tid.x;\n    mul.wide.s32 %rd2, %r1, 4;",
        );
        let one_side = edit_of(
            &one_side,
            "mul.wide.s32 %rd4, %r1, 4;",
            "mul.wide.s32 %rd4, %r2, 4;",
        );
        assert!(!first(&one_side, 1024, 256));
        // The index truncated to 8 bits (threads 256 on store over 0 on).
        let narrow = edit(
            "mul.wide.s32 %rd4, %r1, 4;",
            "cvt.u32.u8 %r2, %r1;\n    mul.wide.s32 %rd4, %r2, 4;",
        );
        assert!(first(SCAN_START, 2048, 512));
        assert!(!first(&narrow, 2048, 512));
        // The padding before dynamic shared memory (1000 bytes round up to
        // 1008) is in the window but no thread's word.
        assert!(!first(SCAN_START, 1000, 250));
        assert!(first(SCAN_START, 1008, 252));
    }
}
