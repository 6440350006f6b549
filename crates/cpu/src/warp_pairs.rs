//! Two warps through a region at once, their instructions interleaved.
//!
//! After a barrier, the round loop runs the region that follows it for one
//! warp after the other (see `emit::cta_fn`). A 16 x 16 SGEMM tile's
//! product is such a region: per warp two vector chains of 16 dependent
//! FMAs (one accumulator per 16-lane half), 4 cycles apart on Zen 4, so
//! one warp keeps the FMA units half busy. The next warp's chains are
//! independent, but 16 FMAs waiting on each chain fill the scheduler
//! before the core reaches them: a C model of the region ran at 0.60 FMAs
//! a cycle warp after warp and 0.98 with two warps' chains interleaved in
//! the instruction stream. LLVM's schedulers keep the two copies apart
//! (tried: the default, `ilpmax`, the post-RA scheduler), so this module
//! interleaves them itself.
//!
//! The round loop calls the region of a pairing site (`pairs_well`) for
//! two full warps with a call of `@wf_pair_mark` between the two inlined
//! copies. Once the CTA function is optimised, `interleave` merges the two
//! halves of the block holding each mark: each half keeps its own order,
//! every value is defined before it is used, and the halves alternate in
//! proportion to their lengths. Why a half's memory accesses may move
//! past the other's: the two warps run the same region between the same
//! two barriers, where a GPU orders nothing between warps either; the
//! region has no atomics, fences, volatile accesses, warp collectives or
//! calls (where the order would show), so any interleaving is one a GPU
//! could run, and a kernel whose result depends on it has a data race.
//! The warps' own state (registers saved in their warp states, codes) is
//! apart. Only warps of 32 lanes pair: narrower warps are slices of one
//! GPU warp, whose lanes the code runs in order. The mark is an opaque
//! call that may touch the kernel's memory, the warp states and the codes
//! (it is passed them), so no pass moves an access to those across it;
//! the rest are the inlined copies' own allocas, and the passes before
//! this one move no access within a block (they delete accesses, they
//! sink none: instcombine sinks a load only past nothing that may write,
//! and the mark may). PTX's `.acquire`, `.release` and `.relaxed` accesses count
//! as plain ones: each warp's half keeps its order. `WARPFOLD_PAIRS=off`
//! turns this off.

use crate::prepare::Prepared;
use crate::shared_regs::value_name;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMAtomicOrdering, LLVMAttributeFunctionIndex, LLVMOpcode};
use std::collections::HashSet;
use warpfold_ir::*;

/// The function whose calls mark where the second warp's copy starts.
pub(crate) const MARK: &str = "wf_pair_mark";

/// Its definition: empty, never inlined, so that until `interleave`
/// removes its calls the optimiser treats them as touching any memory it
/// can reach: the kernel's (through the environment) and, passed to it,
/// the warp states and codes (`noalias` arguments of the CTA function,
/// which a call without them could not touch).
pub(crate) const MARK_FN: &str =
    "define void @wf_pair_mark(i8* %states, i32* %codes) noinline {\n  ret void\n}\n";

/// Blocks interleaved by this process, in code that passed LLVM's
/// verifier (for tests that a kernel takes this path; code generation may
/// run on other threads).
pub(crate) static INTERLEAVED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Floating-point operations a region needs for pairing to pay: fewer,
/// and its time goes to the call and the test for a partner.
const MIN_FLOAT_OPS: usize = 8;

/// Instructions (and block ends) a region may have to be paired: the
/// round loop inlines it three times (once alone, twice paired), and
/// larger regions would cost more JIT time than their chains gain
/// (SGEMM's has about 50).
const MAX_INSTS: usize = 400;

/// Whether `WARPFOLD_PAIRS` leaves this on (read once).
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WARPFOLD_PAIRS").map_or(true, |v| v != "off"))
}

/// Whether the region of blocks `inside` (by position in `p.order`) may
/// run two warps interleaved, and gains: only arithmetic, plain loads and
/// stores and the barriers it ends at (see the module comment), with at
/// least `MIN_FLOAT_OPS` floating-point operations (chains to overlap)
/// and at most `MAX_INSTS` instructions,
/// and no branch: the copies are interleaved where they meet, in one
/// block, so a loop in the region would stay apart (the n-body tile's and
/// the stencil's march ran no faster paired).
pub(crate) fn pairs_well(p: &Prepared, inside: &[bool]) -> bool {
    let (mut floats, mut insts) = (0, 0);
    for (id, b) in p.order.iter().enumerate() {
        if !inside.get(id).copied().unwrap_or(false) {
            continue;
        }
        let block = &p.func.blocks[*b];
        // Straight-line code: the two copies meet in one block only.
        if matches!(block.term, Some(Terminator::Branch { .. })) {
            return false;
        }
        insts += block.insts.len() + 1;
        for i in &block.insts {
            match &i.kind {
                InstKind::Float { .. } => floats += 1,
                InstKind::Ld { volatile, .. } | InstKind::St { volatile, .. } => {
                    if *volatile {
                        return false;
                    }
                }
                InstKind::Bar {
                    kind, dst, count, ..
                } => {
                    if *kind != BarKind::Sync || dst.is_some() || count.is_some() {
                        return false;
                    }
                }
                InstKind::Unpack { .. } => {}
                // (arithmetic and special registers other than clocks)
                k if crate::lanes::pure(k) => {}
                _ => return false,
            }
        }
    }
    floats >= MIN_FLOAT_OPS && insts <= MAX_INSTS
}

/// The round loop's call of region `succ` after barrier site `site` for
/// the current warp `%lw{site}` and, when the next running warp has all
/// its lanes live too, for that one (`%lwb{site}`) after the mark. Ends
/// with `%lc{site}` (the common code; 3 if either was cancelled, 0, which
/// is no lean code, if they differ: the round then goes back to the
/// driver with both codes stored, as when the second of two warps run one
/// after the other differs, though `%lk` is not updated) and `%ln{site}`
/// (the warps left).
/// `all`: every lane.
pub(crate) fn pair_run(site: u32, succ: u32, all: &str) -> String {
    let call = |st: &str, w: &str| {
        format!("call i32 @wf_region{succ}(i8* {st}, i64* %env, i32 {w}, i32 0, i32 0, i8* {st})")
    };
    format!(
        "lr{site}_run:
  %lt1_{site} = sub i32 %lt{site}, 1
  %lrest{site} = and i32 %lt{site}, %lt1_{site}
  %lhas{site} = icmp ne i32 %lrest{site}, 0
  br i1 %lhas{site}, label %lr{site}_pb, label %lr{site}_one
lr{site}_pb:
{second}  br i1 %lfullb{site}, label %lr{site}_two, label %lr{site}_one
lr{site}_two:
  %lca{site} = {call_a}
  %lcpa{site} = getelementptr i32, i32* %codes, i64 %lw64_{site}
  store i32 %lca{site}, i32* %lcpa{site}
  call void @{MARK}(i8* %states, i32* %codes)
  %lcb{site} = {call_b}
  %lcpb{site} = getelementptr i32, i32* %codes, i64 %lwb64_{site}
  store i32 %lcb{site}, i32* %lcpb{site}
  %lab{site} = icmp eq i32 %lca{site}, %lcb{site}
  %lc2_{site} = select i1 %lab{site}, i32 %lca{site}, i32 0
  %la3_{site} = icmp eq i32 %lca{site}, 3
  %lb3_{site} = icmp eq i32 %lcb{site}, 3
  %l3_{site} = or i1 %la3_{site}, %lb3_{site}
  %lc2c_{site} = select i1 %l3_{site}, i32 3, i32 %lc2_{site}
  %lrest1_{site} = sub i32 %lrest{site}, 1
  %ln2_{site} = and i32 %lrest{site}, %lrest1_{site}
  br label %lr{site}_got
lr{site}_one:
  %lc1_{site} = {call_a}
  %lcp{site} = getelementptr i32, i32* %codes, i64 %lw64_{site}
  store i32 %lc1_{site}, i32* %lcp{site}
  br label %lr{site}_got
lr{site}_got:
  %lc{site} = phi i32 [ %lc1_{site}, %lr{site}_one ], [ %lc2c_{site}, %lr{site}_two ]
  %ln{site} = phi i32 [ %lrest{site}, %lr{site}_one ], [ %ln2_{site}, %lr{site}_two ]
",
        second = crate::emit::next_warp(site, "b", &format!("%lrest{site}"), all),
        call_a = call(&format!("%ls{site}"), &format!("%lw{site}")),
        call_b = call(&format!("%lsb{site}"), &format!("%lwb{site}")),
    )
}

/// Merge the two warps' halves of each block of `f` holding a mark, and
/// delete the marks; returns how many blocks were interleaved.
///
/// # Safety
/// `f` must be a function of a live module used by this thread only.
pub(crate) unsafe fn interleave(f: LLVMValueRef) -> usize {
    let mut marks = Vec::new();
    let mut bb = LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        let mut i = LLVMGetFirstInstruction(bb);
        while !i.is_null() {
            if is_mark(i) {
                marks.push(i);
            }
            i = LLVMGetNextInstruction(i);
        }
        bb = LLVMGetNextBasicBlock(bb);
    }
    let mut done = 0;
    for m in marks {
        if merge_halves(m) {
            done += 1;
        }
        LLVMInstructionEraseFromParent(m);
    }
    done
}

/// Whether `i` calls `@wf_pair_mark`.
unsafe fn is_mark(i: LLVMValueRef) -> bool {
    if LLVMGetInstructionOpcode(i) != LLVMOpcode::LLVMCall {
        return false;
    }
    let callee = LLVMGetCalledValue(i);
    !callee.is_null() && !LLVMIsAFunction(callee).is_null() && value_name(callee) == MARK
}

/// Whether instruction `i` may order or be ordered in ways the
/// interleaving cannot see: a call other than a `readnone` intrinsic or a
/// masked access, a fence, an atomic or volatile access, an alloca.
/// Intrinsics carry LLVM's own attributes.
unsafe fn opaque(i: LLVMValueRef) -> bool {
    use LLVMOpcode::*;
    match LLVMGetInstructionOpcode(i) {
        LLVMLoad | LLVMStore => {
            LLVMGetVolatile(i) != 0
                || LLVMGetOrdering(i) != LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
        }
        LLVMCall => {
            let callee = LLVMGetCalledValue(i);
            if callee.is_null()
                || LLVMIsAFunction(callee).is_null()
                || LLVMGetIntrinsicID(callee) == 0
            {
                return true;
            }
            let n = value_name(callee);
            let access = n.starts_with("llvm.masked.") || n.starts_with("llvm.prefetch");
            !access && !has_attribute(callee, "readnone")
        }
        LLVMFence | LLVMAtomicRMW | LLVMAtomicCmpXchg | LLVMInvoke | LLVMVAArg | LLVMAlloca => true,
        _ => false,
    }
}

/// Whether function `f` has the function attribute `attr`.
unsafe fn has_attribute(f: LLVMValueRef, attr: &str) -> bool {
    let kind = LLVMGetEnumAttributeKindForName(attr.as_ptr() as *const _, attr.len());
    kind != 0 && !LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind).is_null()
}

/// Interleave the block of mark `m`: the instructions before it (the
/// first warp's, with what came before the pair) and after it up to the
/// terminator (the second warp's, with what follows), each half in its
/// order, every operand defined in the block placed before its use, the
/// halves taking turns in proportion to their lengths. Phis stay first.
/// Blocks with opaque instructions stay as they are.
unsafe fn merge_halves(m: LLVMValueRef) -> bool {
    let bb = LLVMGetInstructionParent(m);
    let term = LLVMGetBasicBlockTerminator(bb);
    if term.is_null() {
        return false;
    }
    let (mut first, mut second) = (Vec::new(), Vec::new());
    let mut after = false;
    let mut i = LLVMGetFirstInstruction(bb);
    while !i.is_null() && i != term {
        if i == m {
            after = true;
        } else if LLVMGetInstructionOpcode(i) != LLVMOpcode::LLVMPHI {
            if opaque(i) {
                return false;
            }
            if after {
                second.push(i);
            } else {
                first.push(i);
            }
        }
        i = LLVMGetNextInstruction(i);
    }
    if first.is_empty() || second.is_empty() {
        return false;
    }
    let order = merged(&first, &second, |i| operands_in(i, bb));
    let builder = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(m)));
    LLVMPositionBuilderBefore(builder, term);
    for i in order {
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(builder, i);
    }
    LLVMDisposeBuilder(builder);
    true
}

/// The operands of `i` that are instructions of block `bb`.
unsafe fn operands_in(i: LLVMValueRef, bb: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let n = LLVMGetNumOperands(i);
    (0..n.max(0) as u32)
        .map(|k| LLVMGetOperand(i, k))
        .filter(|&o| {
            !o.is_null() && !LLVMIsAInstruction(o).is_null() && LLVMGetInstructionParent(o) == bb
        })
        .collect()
}

/// `a` and `b` merged: each in its order, the next of `b` only once
/// everything it uses (`uses`) is placed, turns in proportion to the
/// lengths. Values of `b` never feed `a` (they come after it), so `a`'s
/// next is always ready.
fn merged<T: Copy + Eq + std::hash::Hash>(
    a: &[T],
    b: &[T],
    mut uses: impl FnMut(T) -> Vec<T>,
) -> Vec<T> {
    let mut placed: HashSet<T> = HashSet::new();
    let in_block: HashSet<T> = a.iter().chain(b).copied().collect();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len() + b.len());
    while i < a.len() || j < b.len() {
        // Take from b when it is behind a in proportion (j / |b| < i / |a|)
        // and its next is ready.
        let b_turn = j < b.len() && (i == a.len() || j * a.len() < i * b.len());
        let ready = b_turn
            && uses(b[j])
                .into_iter()
                .all(|o| placed.contains(&o) || !in_block.contains(&o));
        let x = if ready || i == a.len() {
            j += 1;
            b[j - 1]
        } else {
            i += 1;
            a[i - 1]
        };
        placed.insert(x);
        out.push(x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{merged, pairs_well};
    use crate::prepare::prepared;

    /// A kernel of one straight-line block: `body`, then a barrier.
    fn straight(body: &str) -> String {
        format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n  .reg .f32 %f<4>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .pred %q<2>;\n  .shared .align 4 .b8 s[64];\n  ld.param.u64 %rd0, [p];\n  ld.global.f32 %f1, [%rd0];\n{body}  bar.sync 0;\n  st.global.f32 [%rd0], %f1;\n  ret;\n}}\n"
        )
    }

    fn pairs(src: &str) -> bool {
        let p = prepared(src, "k");
        pairs_well(&p, &vec![true; p.order.len()])
    }

    const CHAIN: &str = "  fma.rn.f32 %f1, %f1, %f1, %f1;\n";

    #[test]
    fn straight_float_chains_pair() {
        assert!(pairs(&straight(&CHAIN.repeat(8))));
        // Shared memory, plain, is fine (a GPU orders no two warps' plain
        // accesses between barriers either).
        let shared = format!(
            "{}  st.shared.f32 [s], %f1;\n  ld.shared.f32 %f2, [s+4];\n",
            CHAIN.repeat(8)
        );
        assert!(pairs(&straight(&shared)));
    }

    #[test]
    fn too_few_floats_too_many_instructions_atomics_volatile_and_branches_do_not() {
        assert!(!pairs(&straight(&CHAIN.repeat(7))));
        assert!(!pairs(&straight(&CHAIN.repeat(super::MAX_INSTS))));
        let with = |extra: &str| straight(&format!("{}{extra}", CHAIN.repeat(8)));
        assert!(!pairs(&with("  atom.shared.add.u32 %r1, [s], 1;\n")));
        assert!(!pairs(&with("  ld.volatile.shared.f32 %f2, [s];\n")));
        assert!(!pairs(&with("  membar.cta;\n")));
        assert!(!pairs(&with("  shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;\n")));
        // (a branch around arithmetic and plain stores becomes guarded
        // instructions: see `if_convert`)
        assert!(!pairs(&with(
            "  setp.gt.f32 %q1, %f1, 0f00000000;\n  @%q1 bra L;\n  st.volatile.global.f32 [%rd0], %f1;\nL:\n"
        )));
        assert_eq!(
            pairs(&with(
                "  setp.gt.f32 %q1, %f1, 0f00000000;\n  @%q1 bra L;\n  st.global.f32 [%rd0], %f1;\nL:\n"
            )),
            crate::if_convert::enabled()
        );
        assert_eq!(
            pairs(&with(
                "  setp.gt.f32 %q1, %f1, 0f00000000;\n  @%q1 bra L;\n  add.f32 %f1, %f1, %f1;\nL:\n"
            )),
            crate::if_convert::enabled()
        );
    }

    #[test]
    fn halves_take_turns_and_keep_their_order() {
        let (a, b) = ([1, 2, 3, 4], [11, 12, 13, 14]);
        let out = merged(&a, &b, |_| Vec::new());
        assert_eq!(out, vec![1, 11, 2, 12, 3, 13, 4, 14]);
    }

    #[test]
    fn a_value_of_the_first_half_comes_before_its_use() {
        // 12 uses 4: everything of the second half waits for it.
        let (a, b) = ([1, 2, 3, 4], [11, 12, 13]);
        let out = merged(&a, &b, |x| if x == 12 { vec![4] } else { Vec::new() });
        let pos = |x| out.iter().position(|&y| y == x).unwrap();
        assert!(pos(4) < pos(12));
        assert!(pos(11) < pos(12) && pos(12) < pos(13));
        assert_eq!(out.len(), 7);
    }

    #[test]
    fn uneven_halves_interleave_in_proportion() {
        let a: Vec<u32> = (0..8).collect();
        let b = [100, 101];
        let out = merged(&a, &b, |_| Vec::new());
        let pos = |x| out.iter().position(|&y| y == x).unwrap();
        assert!(pos(100) <= 2 && (4..=6).contains(&pos(101)), "{out:?}");
    }
}
