//! Shared memory held in vector registers through straight-line code.
//!
//! Once a CTA's rounds are unrolled over its warps (and the warp index is a
//! constant in each copy), a kernel like a Hillis-Steele scan addresses its
//! shared array at constant offsets from the shared base: `s[t - d]` of warp
//! 3 at `d = 4` is bytes 368..496. The CPU then spends its time storing a
//! vector and reloading it, misaligned, a few instructions later, a
//! store-forwarding pattern that runs at about half the speed of keeping
//! the array in registers (a C model of the scan on one core: 4.4 ms against
//! 2.1 ms for 4 Mi elements). LLVM does not forward loads that span two earlier
//! stores, so this pass does, in the optimised CTA function:
//!
//! within each basic block, the shared bytes `[0, bytes)` are mirrored in
//! 64-byte chunks (`<16 x i32>` values). A load or store of 32-bit elements
//! at a constant offset reads or updates the chunks (a shuffle of at most
//! two chunks per 16 lanes); a chunk is loaded from memory the first time
//! it is needed and written back (only the words written) before anything
//! that may read it from memory: the block's end, a call, an atomic, or an
//! access whose address is not a constant offset in shared memory. Such an
//! access that may write also forgets the chunks. The mirror is exact, byte
//! for byte, so it needs nothing of the kernel's semantics: only that no
//! other thread touches this CTA's shared memory while the block runs.
//! Two reads are known not to touch it: loads marked `!invariant.load`
//! (the environment, kernel parameters and constants) and loads marked
//! `GLOBAL_READ`, which `lower` puts on the code of `ld.global` (PTX's
//! global space never holds shared memory).
//!
//! A block is rewritten only where the accesses reuse chunks enough to pay
//! for the loads and shuffles (see `worth_it`).
//!
//! A block that ends the CTA (see `Pass::finishes`) keeps nothing it writes
//! to shared memory after its last read of it: no thread reads a CTA's
//! shared memory once the CTA is done (the next CTA on the worker starts
//! from cleared memory, or writes before it reads: `shared_init`). Its
//! write-backs from there on, and its own mirrored stores there when the
//! block is not rewritten, are dropped: a block reduction's tree wrote its
//! sums back, ten 64-byte stores a CTA that nothing read.

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMAtomicOrdering, LLVMOpcode, LLVMTypeKind};
use std::collections::HashMap;

/// The metadata kind marking loads of PTX's global space (see
/// `lower::mark_global_reads`).
pub(crate) const GLOBAL_READ: &str = "wf.global";

/// Bytes per chunk, and 32-bit words per chunk.
const CHUNK: i64 = 64;
const WORDS: u32 = 16;

/// The 32-bit elements a load or store touches: `n` of them at byte
/// `off` from the shared base `base`; `bits`: the lanes, when the mask is
/// a constant; `masked`: a masked load or store intrinsic (mask and
/// pass-through as operands).
#[derive(Clone, Copy)]
struct Span {
    off: i64,
    n: u32,
    bits: Option<u64>,
    masked: bool,
    base: LLVMValueRef,
}

/// What one instruction does to shared memory. Operands are read again
/// when the access is rewritten: earlier rewrites replace values.
enum Access {
    Load(Span),
    Store(Span),
    /// May read shared memory in ways not modelled: write back first.
    Reads,
    /// May write it: write back, then forget.
    Writes,
    /// Touches no shared memory.
    None,
}

#[derive(Clone, Copy)]
enum Mask {
    Bits(u64),
    Value(LLVMValueRef),
}

impl Mask {
    /// Whether lane `e` may be on (any lane, for a run-time mask).
    fn on(self, e: u32) -> bool {
        match self {
            Mask::Bits(b) => b >> e & 1 == 1,
            Mask::Value(_) => true,
        }
    }
}

/// Rewrite `f`'s blocks as described above; `env` is the index of `f`'s
/// environment parameter, `slot` the environment word holding the shared
/// base address and `bytes` the kernel's static shared size; `done`, the
/// index of the parameter through which `f` tells the driver which warps
/// still run (a zero stored there before returning: the CTA has
/// finished), if it has one. Returns how many accesses now use registers.
///
/// # Safety
/// `f` must be a function in a module of a live LLVM context, not being
/// used by another thread.
pub(crate) unsafe fn promote(
    f: LLVMValueRef,
    env: u32,
    slot: u64,
    bytes: u64,
    done: Option<u32>,
) -> usize {
    if bytes == 0 || bytes > 4096 {
        return 0;
    }
    let mut p = Pass::new(f, env, slot, bytes as i64);
    p.done = done.map(|i| LLVMGetParam(f, i));
    let mut promoted = 0;
    let mut bb = LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        promoted += p.block(bb);
        bb = LLVMGetNextBasicBlock(bb);
    }
    LLVMDisposeBuilder(p.b);
    PROMOTED.with(|c| c.set(c.get() + promoted));
    promoted
}

thread_local! {
    /// Accesses this thread's compilations kept in registers (for tests).
    pub(crate) static PROMOTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Chunk write-backs and stores dropped at the end of a CTA (for tests).
    pub(crate) static DROPPED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

struct Pass {
    ctx: LLVMContextRef,
    module: LLVMModuleRef,
    b: LLVMBuilderRef,
    env: LLVMValueRef,
    slot: u64,
    bytes: i64,
    i32t: LLVMTypeRef,
    i64t: LLVMTypeRef,
    i1t: LLVMTypeRef,
    chunk_t: LLVMTypeRef,
    /// Per chunk: its value when known, and which of its words were
    /// written since the last write-back.
    chunks: Vec<Option<LLVMValueRef>>,
    dirty: Vec<u32>,
    /// A shared base address usable where chunks are loaded or written.
    base: Option<LLVMValueRef>,
    /// Called functions known to touch no shared memory (cached).
    pure_calls: HashMap<LLVMValueRef, bool>,
    /// The running-warps parameter (see `promote`).
    done: Option<LLVMValueRef>,
    /// Metadata kinds `!invariant.load` and `GLOBAL_READ`.
    md_invariant: u32,
    md_global: u32,
}

impl Pass {
    unsafe fn new(f: LLVMValueRef, env: u32, slot: u64, bytes: i64) -> Pass {
        let module = LLVMGetGlobalParent(f);
        let ctx = LLVMGetModuleContext(module);
        let i32t = LLVMInt32TypeInContext(ctx);
        let n_chunks = ((bytes + CHUNK - 1) / CHUNK) as usize;
        Pass {
            ctx,
            module,
            b: LLVMCreateBuilderInContext(ctx),
            env: LLVMGetParam(f, env),
            slot,
            bytes,
            i32t,
            i64t: LLVMInt64TypeInContext(ctx),
            i1t: LLVMInt1TypeInContext(ctx),
            chunk_t: LLVMVectorType(i32t, WORDS),
            chunks: vec![None; n_chunks],
            dirty: vec![0; n_chunks],
            base: None,
            pure_calls: HashMap::new(),
            done: None,
            md_invariant: LLVMGetMDKindIDInContext(ctx, c"invariant.load".as_ptr(), 14),
            md_global: LLVMGetMDKindIDInContext(
                ctx,
                GLOBAL_READ.as_ptr() as *const _,
                GLOBAL_READ.len() as u32,
            ),
        }
    }

    /// The block's instructions with what each does to shared memory.
    unsafe fn classify_block(&mut self, bb: LLVMBasicBlockRef) -> Vec<(LLVMValueRef, Access)> {
        let mut out = Vec::new();
        let mut i = LLVMGetFirstInstruction(bb);
        while !i.is_null() {
            out.push((i, self.classify(i)));
            i = LLVMGetNextInstruction(i);
        }
        out
    }

    unsafe fn block(&mut self, bb: LLVMBasicBlockRef) -> usize {
        let insts = self.classify_block(bb);
        let finishing = self.finishes(bb);
        // In a block that ends the CTA, the first instruction from which on
        // nothing reads shared memory (else past the end).
        let unread = if finishing {
            insts
                .iter()
                .rposition(|(i, a)| match a {
                    Access::Load(_) | Access::Reads => true,
                    Access::Writes => !writes_only(*i),
                    Access::Store(_) | Access::None => false,
                })
                .map_or(0, |i| i + 1)
        } else {
            insts.len()
        };
        if !self.worth_it(&insts) {
            // Stores nothing reads any more.
            let mut dropped = 0;
            for (inst, access) in &insts[unread..] {
                if matches!(access, Access::Store(_)) {
                    LLVMInstructionEraseFromParent(*inst);
                    dropped += 1;
                }
            }
            DROPPED.with(|c| c.set(c.get() + dropped));
            return 0;
        }
        self.chunks.iter_mut().for_each(|c| *c = None);
        self.dirty.iter_mut().for_each(|d| *d = 0);
        self.base = None;
        let mut promoted = 0;
        for (at, (inst, access)) in insts.into_iter().enumerate() {
            LLVMPositionBuilderBefore(self.b, inst);
            let read_later = at < unread;
            match access {
                Access::Load(span) | Access::Store(span) => {
                    let load = matches!(access, Access::Load(_));
                    self.base = Some(span.base);
                    // A mask known bit by bit, else the run-time one
                    // (operand 2 of a masked load, 3 of a masked store).
                    let mask = span.bits.map_or_else(
                        || Mask::Value(LLVMGetOperand(inst, if load { 2 } else { 3 })),
                        Mask::Bits,
                    );
                    if load {
                        let old = span.masked.then(|| LLVMGetOperand(inst, 3));
                        let v = self.read(span.off, span.n, mask, old, LLVMTypeOf(inst));
                        LLVMReplaceAllUsesWith(inst, v);
                    } else {
                        self.write(span.off, span.n, mask, LLVMGetOperand(inst, 0));
                    }
                    LLVMInstructionEraseFromParent(inst);
                    promoted += 1;
                }
                Access::Reads => self.write_back(),
                Access::Writes => {
                    if read_later {
                        self.write_back();
                    } else {
                        self.drop_dirty();
                    }
                    self.chunks.iter_mut().for_each(|c| *c = None);
                }
                Access::None => {}
            }
        }
        // Whatever is still dirty goes back before the block's branch,
        // unless the CTA ends there.
        let term = LLVMGetBasicBlockTerminator(bb);
        if !term.is_null() {
            LLVMPositionBuilderBefore(self.b, term);
            if finishing {
                self.drop_dirty();
            } else {
                self.write_back();
            }
        }
        promoted
    }

    /// Forget the words written since the last write-back (nothing will
    /// read them).
    fn drop_dirty(&mut self) {
        let n = self.dirty.iter().filter(|&&d| d != 0).count();
        DROPPED.with(|c| c.set(c.get() + n));
        self.dirty.iter_mut().for_each(|d| *d = 0);
    }

    /// Whether the CTA has finished when `bb` has run: from it, branches
    /// without conditions lead to a return through blocks that do nothing
    /// but store zero (no warp running) to the `done` parameter, and one of
    /// them (or `bb` itself) does.
    unsafe fn finishes(&self, bb: LLVMBasicBlockRef) -> bool {
        let Some(done) = self.done else {
            return false;
        };
        let to_done = |i: LLVMValueRef| {
            LLVMGetInstructionOpcode(i) == LLVMOpcode::LLVMStore && LLVMGetOperand(i, 1) == done
        };
        let zero =
            |v: LLVMValueRef| !LLVMIsAConstantInt(v).is_null() && LLVMConstIntGetZExtValue(v) == 0;
        // Whether the last store there so far was a zero.
        let mut stored = false;
        let mut b = bb;
        for step in 0..4 {
            let term = LLVMGetBasicBlockTerminator(b);
            if term.is_null() {
                return false;
            }
            let mut i = LLVMGetFirstInstruction(b);
            while !i.is_null() && i != term {
                if to_done(i) {
                    stored = zero(LLVMGetOperand(i, 0));
                } else if step > 0 && LLVMIsAPHINode(i).is_null() {
                    return false;
                }
                i = LLVMGetNextInstruction(i);
            }
            match LLVMGetInstructionOpcode(term) {
                LLVMOpcode::LLVMRet => return stored,
                LLVMOpcode::LLVMBr if LLVMGetNumSuccessors(term) == 1 => {
                    b = LLVMGetSuccessor(term, 0);
                }
                _ => return false,
            }
        }
        false
    }

    /// Whether the block's modelled accesses reuse chunks enough: at least
    /// 8 of them, and at least twice as many as the chunks they make us
    /// load (counted per stretch between points that forget the chunks).
    unsafe fn worth_it(&self, insts: &[(LLVMValueRef, Access)]) -> bool {
        let mut accesses = 0usize;
        let mut loads = 0usize;
        let mut known = vec![false; self.chunks.len()];
        for (_, a) in insts {
            match a {
                Access::Load(Span { off, n, .. }) | Access::Store(Span { off, n, .. }) => {
                    accesses += 1;
                    let first = (off / CHUNK) as usize;
                    let last = ((off + 4 * *n as i64 - 1) / CHUNK) as usize;
                    for k in known.iter_mut().take(last + 1).skip(first) {
                        if !*k {
                            *k = true;
                            loads += 1;
                        }
                    }
                }
                Access::Writes => known.iter_mut().for_each(|k| *k = false),
                _ => {}
            }
        }
        accesses >= 8 && accesses >= 2 * loads
    }

    /// `v` is a load of the shared base from the environment.
    unsafe fn is_base(&self, v: LLVMValueRef) -> bool {
        if LLVMIsAInstruction(v).is_null() || LLVMGetInstructionOpcode(v) != LLVMOpcode::LLVMLoad {
            return false;
        }
        let p = strip_casts(LLVMGetOperand(v, 0));
        if p == self.env {
            return self.slot == 0;
        }
        if LLVMIsAInstruction(p).is_null()
            || LLVMGetInstructionOpcode(p) != LLVMOpcode::LLVMGetElementPtr
            || LLVMGetNumOperands(p) != 2
            || LLVMGetOperand(p, 0) != self.env
        {
            return false;
        }
        let idx = LLVMGetOperand(p, 1);
        !LLVMIsAConstantInt(idx).is_null() && LLVMConstIntGetSExtValue(idx) == self.slot as i64
    }

    /// The byte offset from the shared base that the pointer `p` holds,
    /// when it is the base plus a constant, and that base (a load that
    /// dominates every use of `p`).
    unsafe fn shared_offset(&self, p: LLVMValueRef) -> Option<(i64, LLVMValueRef)> {
        let p = strip_casts(p);
        if LLVMIsAInstruction(p).is_null()
            || LLVMGetInstructionOpcode(p) != LLVMOpcode::LLVMIntToPtr
        {
            return None;
        }
        let mut v = LLVMGetOperand(p, 0);
        let mut off: i64 = 0;
        for _ in 0..8 {
            if self.is_base(v) {
                return Some((off, v));
            }
            if LLVMIsAInstruction(v).is_null() || LLVMGetInstructionOpcode(v) != LLVMOpcode::LLVMAdd
            {
                return None;
            }
            let (a, b) = (LLVMGetOperand(v, 0), LLVMGetOperand(v, 1));
            let (c, rest) = if !LLVMIsAConstantInt(b).is_null() {
                (b, a)
            } else if !LLVMIsAConstantInt(a).is_null() {
                (a, b)
            } else {
                return None;
            };
            off = off.checked_add(LLVMConstIntGetSExtValue(c))?;
            v = rest;
        }
        None
    }

    /// Whether a pointer certainly does not point into shared memory: it
    /// is based on a parameter, a local variable or a global.
    unsafe fn private_pointer(&self, p: LLVMValueRef) -> bool {
        let mut p = p;
        for _ in 0..16 {
            p = strip_casts(p);
            if !LLVMIsAArgument(p).is_null()
                || !LLVMIsAAllocaInst(p).is_null()
                || !LLVMIsAGlobalValue(p).is_null()
            {
                return true;
            }
            let gep = if !LLVMIsAInstruction(p).is_null() {
                LLVMGetInstructionOpcode(p) == LLVMOpcode::LLVMGetElementPtr
            } else {
                !LLVMIsAConstantExpr(p).is_null()
                    && LLVMGetConstOpcode(p) == LLVMOpcode::LLVMGetElementPtr
            };
            if !gep {
                return false;
            }
            p = LLVMGetOperand(p, 0);
        }
        false
    }

    /// 32-bit elements per value of type `t` (a 32-bit scalar or a vector
    /// of them), else `None`.
    unsafe fn words(&self, t: LLVMTypeRef) -> Option<u32> {
        let word = |t: LLVMTypeRef| match LLVMGetTypeKind(t) {
            LLVMTypeKind::LLVMFloatTypeKind => true,
            LLVMTypeKind::LLVMIntegerTypeKind => LLVMGetIntTypeWidth(t) == 32,
            _ => false,
        };
        if word(t) {
            return Some(1);
        }
        if LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind && word(LLVMGetElementType(t)) {
            let n = LLVMGetVectorSize(t);
            if n.is_power_of_two() && n <= 64 {
                return Some(n);
            }
        }
        None
    }

    /// The lanes `off..off + 4n` lie in the mirrored bytes (`mask`: the
    /// lanes that count) and the offset is word-aligned.
    fn in_range(&self, off: i64, n: u32, bits: Option<u64>) -> bool {
        if off % 4 != 0 {
            return false;
        }
        (0..n as i64).all(|e| {
            let on = bits.is_none_or(|b| b >> e & 1 == 1);
            let at = off + 4 * e;
            !on || (0..self.bytes - 3).contains(&at)
        })
    }

    unsafe fn classify(&mut self, i: LLVMValueRef) -> Access {
        let plain = |i| LLVMGetOrdering(i) == LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic;
        match LLVMGetInstructionOpcode(i) {
            LLVMOpcode::LLVMLoad if plain(i) && (self.invariant(i) || self.global_read(i)) => {
                Access::None
            }
            LLVMOpcode::LLVMLoad if plain(i) => {
                let volatile = LLVMGetVolatile(i) != 0;
                self.access(false, LLVMGetOperand(i, 0), LLVMTypeOf(i), None, volatile)
            }
            LLVMOpcode::LLVMStore if plain(i) => {
                let ty = LLVMTypeOf(LLVMGetOperand(i, 0));
                let volatile = LLVMGetVolatile(i) != 0;
                self.access(true, LLVMGetOperand(i, 1), ty, None, volatile)
            }
            LLVMOpcode::LLVMCall => self.classify_call(i),
            LLVMOpcode::LLVMLoad
            | LLVMOpcode::LLVMStore
            | LLVMOpcode::LLVMAtomicRMW
            | LLVMOpcode::LLVMAtomicCmpXchg
            | LLVMOpcode::LLVMFence
            | LLVMOpcode::LLVMInvoke
            | LLVMOpcode::LLVMCallBr
            | LLVMOpcode::LLVMVAArg => Access::Writes,
            _ => Access::None,
        }
    }

    /// A load or store (`store`) of a `ty` value through `p`, its lanes
    /// masked by the operand `mask` for the intrinsics: mirrored when it
    /// is 32-bit elements at a constant offset in the mirrored bytes, else
    /// a read or write the pass does not model (so is a volatile access).
    unsafe fn access(
        &self,
        store: bool,
        p: LLVMValueRef,
        ty: LLVMTypeRef,
        mask: Option<LLVMValueRef>,
        volatile: bool,
    ) -> Access {
        if self.private_pointer(p) {
            return Access::None;
        }
        if !volatile {
            if let (Some((off, base)), Some(n)) = (self.shared_offset(p), self.words(ty)) {
                let bits = mask.map_or(Some(all(n)), |m| const_mask(m, n));
                if self.in_range(off, n, bits) {
                    let span = Span {
                        off,
                        n,
                        bits,
                        masked: mask.is_some(),
                        base,
                    };
                    return if store {
                        Access::Store(span)
                    } else {
                        Access::Load(span)
                    };
                }
            }
        }
        if store {
            Access::Writes
        } else {
            Access::Reads
        }
    }

    /// A load marked `!invariant.load`: the environment and kernel
    /// parameters or constants, which no store changes (so not shared
    /// memory).
    unsafe fn invariant(&self, i: LLVMValueRef) -> bool {
        !LLVMGetMetadata(i, self.md_invariant).is_null()
    }

    /// A read of PTX's global space (marked `GLOBAL_READ` where it was
    /// emitted), which never holds shared memory.
    unsafe fn global_read(&self, i: LLVMValueRef) -> bool {
        !LLVMGetMetadata(i, self.md_global).is_null()
    }

    unsafe fn classify_call(&mut self, i: LLVMValueRef) -> Access {
        let callee = LLVMGetCalledValue(i);
        if LLVMIsAFunction(callee).is_null() {
            return Access::Writes;
        }
        let name = value_name(callee);
        let reads_only =
            name.starts_with("llvm.masked.load.") || name.starts_with("llvm.masked.gather.");
        if reads_only && self.global_read(i) {
            return Access::None;
        }
        if name.starts_with("llvm.masked.load.") {
            let mask = Some(LLVMGetOperand(i, 2));
            return self.access(false, LLVMGetOperand(i, 0), LLVMTypeOf(i), mask, false);
        }
        if name.starts_with("llvm.masked.store.") {
            let ty = LLVMTypeOf(LLVMGetOperand(i, 0));
            let mask = Some(LLVMGetOperand(i, 3));
            return self.access(true, LLVMGetOperand(i, 1), ty, mask, false);
        }
        if self.pure_call(callee, &name) {
            Access::None
        } else {
            Access::Writes
        }
    }

    /// Intrinsics that touch no memory this pass mirrors.
    unsafe fn pure_call(&mut self, callee: LLVMValueRef, name: &str) -> bool {
        if let Some(&p) = self.pure_calls.get(&callee) {
            return p;
        }
        let hint = [
            "llvm.experimental.noalias.scope.decl",
            "llvm.assume",
            "llvm.prefetch",
            "llvm.lifetime.",
            "llvm.dbg.",
        ];
        let pure = name.starts_with("llvm.")
            && (hint.iter().any(|h| name.starts_with(h)) || {
                let kind = LLVMGetEnumAttributeKindForName(c"readnone".as_ptr(), 8);
                !LLVMGetEnumAttributeAtIndex(callee, llvm_sys::LLVMAttributeFunctionIndex, kind)
                    .is_null()
            });
        self.pure_calls.insert(callee, pure);
        pure
    }

    unsafe fn i32c(&self, v: i64) -> LLVMValueRef {
        LLVMConstInt(self.i32t, v as u64, 0)
    }

    /// A shuffle-mask constant (`None`: undefined lane).
    unsafe fn shuffle_mask(&self, idx: &[Option<u32>]) -> LLVMValueRef {
        let mut v: Vec<LLVMValueRef> = idx
            .iter()
            .map(|i| match i {
                Some(i) => self.i32c(*i as i64),
                None => LLVMGetUndef(self.i32t),
            })
            .collect();
        LLVMConstVector(v.as_mut_ptr(), v.len() as u32)
    }

    unsafe fn shuffle(
        &self,
        a: LLVMValueRef,
        b: LLVMValueRef,
        idx: &[Option<u32>],
    ) -> LLVMValueRef {
        LLVMBuildShuffleVector(self.b, a, b, self.shuffle_mask(idx), c"".as_ptr())
    }

    /// Pointer to chunk `k` as `<16 x i32>*`.
    unsafe fn chunk_ptr(&self, k: usize) -> LLVMValueRef {
        let base = self
            .base
            .expect("a chunk is only touched after an access set the base");
        let addr = LLVMBuildAdd(
            self.b,
            base,
            LLVMConstInt(self.i64t, k as u64 * CHUNK as u64, 0),
            c"".as_ptr(),
        );
        LLVMBuildIntToPtr(self.b, addr, LLVMPointerType(self.chunk_t, 0), c"".as_ptr())
    }

    /// Words of chunk `k` inside the mirrored bytes.
    fn chunk_words(&self, k: usize) -> u32 {
        let left = self.bytes - k as i64 * CHUNK;
        (left / 4).min(WORDS as i64) as u32
    }

    /// Chunk `k`'s value, loaded from memory the first time.
    unsafe fn chunk(&mut self, k: usize) -> LLVMValueRef {
        if let Some(v) = self.chunks[k] {
            return v;
        }
        let p = self.chunk_ptr(k);
        let words = self.chunk_words(k);
        let v = if words == WORDS {
            let l = LLVMBuildLoad2(self.b, self.chunk_t, p, c"shc".as_ptr());
            LLVMSetAlignment(l, 4);
            l
        } else {
            let m = self.bool_vector(|j| j < words);
            self.masked(
                "llvm.masked.load",
                &[self.chunk_t, LLVMPointerType(self.chunk_t, 0)],
                &mut [p, self.i32c(4), m, LLVMGetUndef(self.chunk_t)],
            )
        };
        self.chunks[k] = Some(v);
        v
    }

    unsafe fn bool_vector(&self, on: impl Fn(u32) -> bool) -> LLVMValueRef {
        let mut bits: Vec<LLVMValueRef> = (0..WORDS)
            .map(|j| LLVMConstInt(self.i1t, on(j) as u64, 0))
            .collect();
        LLVMConstVector(bits.as_mut_ptr(), WORDS)
    }

    unsafe fn masked(
        &self,
        name: &str,
        types: &[LLVMTypeRef],
        args: &mut [LLVMValueRef],
    ) -> LLVMValueRef {
        let id = LLVMLookupIntrinsicID(name.as_ptr() as *const _, name.len());
        let mut types = types.to_vec();
        let f = LLVMGetIntrinsicDeclaration(self.module, id, types.as_mut_ptr(), types.len());
        let fty = LLVMIntrinsicGetType(self.ctx, id, types.as_mut_ptr(), types.len());
        LLVMBuildCall2(
            self.b,
            fty,
            f,
            args.as_mut_ptr(),
            args.len() as u32,
            c"".as_ptr(),
        )
    }

    /// Where element `e` of an access at `off` lives: chunk and word.
    fn place(off: i64, e: u32) -> (usize, u32) {
        let at = off + 4 * e as i64;
        ((at / CHUNK) as usize, ((at % CHUNK) / 4) as u32)
    }

    unsafe fn read(
        &mut self,
        off: i64,
        n: u32,
        mask: Mask,
        old: Option<LLVMValueRef>,
        ty: LLVMTypeRef,
    ) -> LLVMValueRef {
        let on = |e: u32| mask.on(e);
        // Groups of up to 16 lanes, each from at most two chunks.
        let group = n.min(WORDS);
        let mut parts = Vec::new();
        for g in 0..n / group {
            let lanes: Vec<u32> = (g * group..(g + 1) * group).collect();
            let mut srcs: Vec<usize> = Vec::new();
            for &e in &lanes {
                if on(e) {
                    let (k, _) = Self::place(off, e);
                    if !srcs.contains(&k) {
                        srcs.push(k);
                    }
                }
            }
            let a = match srcs.first() {
                Some(&k) => self.chunk(k),
                None => LLVMGetUndef(self.chunk_t),
            };
            let b = match srcs.get(1) {
                Some(&k) => self.chunk(k),
                None => LLVMGetUndef(self.chunk_t),
            };
            let idx: Vec<Option<u32>> = lanes
                .iter()
                .map(|&e| {
                    if !on(e) {
                        return None;
                    }
                    let (k, w) = Self::place(off, e);
                    Some(if Some(&k) == srcs.first() {
                        w
                    } else {
                        WORDS + w
                    })
                })
                .collect();
            parts.push(self.shuffle(a, b, &idx));
        }
        let mut v = parts[0];
        if parts.len() > 1 {
            // Concatenate the groups pairwise (n / 16 is a power of two).
            while parts.len() > 1 {
                let mut next = Vec::new();
                for pair in parts.chunks(2) {
                    let w = LLVMGetVectorSize(LLVMTypeOf(pair[0]));
                    let idx: Vec<Option<u32>> = (0..2 * w).map(Some).collect();
                    next.push(self.shuffle(pair[0], pair[1], &idx));
                }
                parts = next;
            }
            v = parts[0];
        }
        // `v` is `<n x i32>`: the lanes a masked load leaves take the
        // pass-through value.
        let vt = LLVMVectorType(self.i32t, n);
        if let Some(old) = old {
            let old_i = LLVMBuildBitCast(self.b, old, vt, c"".as_ptr());
            v = match mask {
                Mask::Bits(b) => {
                    let idx: Vec<Option<u32>> = (0..n)
                        .map(|e| Some(if b >> e & 1 == 1 { e } else { n + e }))
                        .collect();
                    self.shuffle(v, old_i, &idx)
                }
                Mask::Value(m) => LLVMBuildSelect(self.b, m, v, old_i, c"".as_ptr()),
            };
        }
        if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMVectorTypeKind {
            LLVMBuildBitCast(self.b, v, ty, c"".as_ptr())
        } else {
            let s = LLVMBuildExtractElement(self.b, v, self.i32c(0), c"".as_ptr());
            LLVMBuildBitCast(self.b, s, ty, c"".as_ptr())
        }
    }

    unsafe fn write(&mut self, off: i64, n: u32, mask: Mask, val: LLVMValueRef) {
        let vt = LLVMVectorType(self.i32t, n);
        let data = if LLVMGetTypeKind(LLVMTypeOf(val)) == LLVMTypeKind::LLVMVectorTypeKind {
            LLVMBuildBitCast(self.b, val, vt, c"".as_ptr())
        } else {
            let s = LLVMBuildBitCast(self.b, val, self.i32t, c"".as_ptr());
            LLVMBuildInsertElement(self.b, LLVMGetUndef(vt), s, self.i32c(0), c"".as_ptr())
        };
        let on = |e: u32| mask.on(e);
        let mut touched: Vec<usize> = Vec::new();
        for e in 0..n {
            if on(e) {
                let (k, _) = Self::place(off, e);
                if !touched.contains(&k) {
                    touched.push(k);
                }
            }
        }
        for k in touched {
            // Element of the access stored in each word of chunk k.
            let from: Vec<Option<u32>> = (0..WORDS)
                .map(|w| {
                    let at = k as i64 * CHUNK + 4 * w as i64 - off;
                    (at >= 0 && at < 4 * n as i64 && on((at / 4) as u32)).then_some((at / 4) as u32)
                })
                .collect();
            let covered: u32 = from
                .iter()
                .enumerate()
                .filter(|(_, f)| f.is_some())
                .fold(0, |acc, (w, _)| acc | 1 << w);
            let whole = covered == (1u32 << WORDS) - 1 && matches!(mask, Mask::Bits(_));
            let part = self.shuffle(data, LLVMGetUndef(vt), &from);
            let new = if whole {
                part
            } else {
                let old = self.chunk(k);
                match mask {
                    Mask::Bits(_) => {
                        let idx: Vec<Option<u32>> = (0..WORDS)
                            .map(|w| Some(if covered >> w & 1 == 1 { WORDS + w } else { w }))
                            .collect();
                        self.shuffle(old, part, &idx)
                    }
                    Mask::Value(m) => {
                        // The mask's lanes for this chunk's words; false
                        // where the access does not reach.
                        let mt = LLVMVectorType(self.i1t, n);
                        let idx: Vec<Option<u32>> =
                            from.iter().map(|f| Some(f.unwrap_or(n))).collect();
                        let mk = self.shuffle(m, LLVMConstNull(mt), &idx);
                        LLVMBuildSelect(self.b, mk, part, old, c"".as_ptr())
                    }
                }
            };
            self.chunks[k] = Some(new);
            self.dirty[k] |= covered;
        }
    }

    /// Store the written words of every chunk back to memory.
    unsafe fn write_back(&mut self) {
        for k in 0..self.chunks.len() {
            let d = self.dirty[k];
            if d == 0 {
                continue;
            }
            let v = self.chunks[k].expect("a dirty chunk is known");
            let p = self.chunk_ptr(k);
            if d == (1u32 << WORDS) - 1 {
                let s = LLVMBuildStore(self.b, v, p);
                LLVMSetAlignment(s, 4);
            } else {
                let m = self.bool_vector(|j| d >> j & 1 == 1);
                self.masked(
                    "llvm.masked.store",
                    &[self.chunk_t, LLVMPointerType(self.chunk_t, 0)],
                    &mut [v, p, self.i32c(4), m],
                );
            }
            self.dirty[k] = 0;
        }
    }
}

/// Whether an access the pass does not model only writes memory: a plain
/// store, or a masked store or scatter.
unsafe fn writes_only(i: LLVMValueRef) -> bool {
    match LLVMGetInstructionOpcode(i) {
        LLVMOpcode::LLVMStore => true,
        LLVMOpcode::LLVMCall => {
            let callee = LLVMGetCalledValue(i);
            !LLVMIsAFunction(callee).is_null() && {
                let name = value_name(callee);
                name.starts_with("llvm.masked.store.") || name.starts_with("llvm.masked.scatter.")
            }
        }
        _ => false,
    }
}

fn all(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// `p` without bitcasts (instructions or constant expressions).
unsafe fn strip_casts(mut p: LLVMValueRef) -> LLVMValueRef {
    loop {
        let cast = if !LLVMIsAInstruction(p).is_null() {
            LLVMGetInstructionOpcode(p) == LLVMOpcode::LLVMBitCast
        } else {
            !LLVMIsAConstantExpr(p).is_null() && LLVMGetConstOpcode(p) == LLVMOpcode::LLVMBitCast
        };
        if !cast {
            return p;
        }
        p = LLVMGetOperand(p, 0);
    }
}

/// An LLVM value's name.
pub(crate) unsafe fn value_name(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    let p = LLVMGetValueName2(v, &mut len);
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
}

/// A mask operand as constant bits when it is a constant vector of
/// `true`/`false`.
unsafe fn const_mask(m: LLVMValueRef, n: u32) -> Option<u64> {
    if !LLVMIsAConstantAggregateZero(m).is_null() {
        return Some(0);
    }
    if !LLVMIsAConstantVector(m).is_null() && n <= 64 {
        let mut bits = 0u64;
        for e in 0..n {
            let x = LLVMGetOperand(m, e);
            if LLVMIsAConstantInt(x).is_null() {
                return None;
            }
            if LLVMConstIntGetZExtValue(x) != 0 {
                bits |= 1 << e;
            }
        }
        return Some(bits);
    }
    None
}

#[cfg(test)]
mod tests {
    //! Random straight-line sequences of shared-memory accesses, compiled
    //! with and without the pass: the shared bytes, a global buffer and
    //! every value loaded must come out the same.

    use crate::emit::{SHARED_BYTES_MARK, UNROLLED_MARK};
    use crate::jit::{codegen_with, load_objects};
    use std::fmt::Write;

    /// Shared bytes: the last 64-byte chunk is partial.
    const BYTES: i64 = 268;
    /// Guard bytes after the shared array, which nothing may change.
    const GUARD: usize = 128;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn vec_ty(n: u32) -> String {
        if n == 1 {
            "i32".into()
        } else {
            format!("<{n} x i32>")
        }
    }

    fn mask_lit(n: u32, bits: u64) -> String {
        let lanes: Vec<String> = (0..n)
            .map(|e| format!("i1 {}", if bits >> e & 1 == 1 { "true" } else { "false" }))
            .collect();
        format!("<{n} x i1> <{}>", lanes.join(", "))
    }

    /// How a test CTA function returns.
    #[derive(Clone, Copy, PartialEq)]
    enum End {
        /// Back to the driver, which may call it again (no store).
        Plain,
        /// Through a block that stores zero to `%runp`: the CTA is done.
        Done,
        /// Storing one there: a warp still runs.
        Running,
    }

    /// A CTA function of `ops` random accesses; it stores every value it
    /// loads into the state (`%states`), which is private memory.
    fn program(seed: u64, ops: usize, end: End) -> String {
        let mut r = Rng(seed);
        let mut f = String::new();
        let mut t = 0usize;
        let mut out = 0usize;
        let mut vals: Vec<(u32, String)> = Vec::new();
        let _ = writeln!(f, "{UNROLLED_MARK}\n{SHARED_BYTES_MARK}{BYTES}");
        f.push_str(
            "define i32 @wf_cta(i8* noalias %states, i64* %env, i64 %sb, i32* noalias %runp, i32* noalias %fresh, i32* noalias %codes) {\nentry:\n",
        );
        f.push_str("  %bp = getelementptr i64, i64* %env, i64 1\n  %b = load i64, i64* %bp, align 8, !invariant.load !0\n");
        // The global buffer, a second copy of the shared base the pass
        // cannot recognise, and a run-time mask.
        f.push_str(
            "  %gp = getelementptr i64, i64* %env, i64 2\n  %g = load i64, i64* %gp, align 8\n",
        );
        f.push_str(
            "  %ap = getelementptr i64, i64* %env, i64 3\n  %alias = load i64, i64* %ap, align 8\n",
        );
        f.push_str(
            "  %mp = getelementptr i64, i64* %env, i64 4\n  %m64 = load i64, i64* %mp, align 8\n",
        );
        f.push_str("  %m32 = trunc i64 %m64 to i32\n  %dm32 = bitcast i32 %m32 to <32 x i1>\n");
        f.push_str("  %m16 = trunc i64 %m64 to i16\n  %dm16 = bitcast i16 %m16 to <16 x i1>\n");
        f.push_str("  %m8 = trunc i64 %m64 to i8\n  %dm8 = bitcast i8 %m8 to <8 x i1>\n");
        for _ in 0..ops {
            let n = [1u32, 4, 8, 16, 32, 32, 32][r.below(7) as usize];
            // Mostly in range; sometimes reaching out with those lanes off.
            let words = (BYTES / 4) as u64;
            let mut off = 4 * r.below(words.saturating_sub(n as u64) + 1) as i64;
            let mut bits = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            // Mostly modelled accesses; now and then one that is not.
            let kind = r.below(40);
            if n > 1 && r.below(4) == 0 {
                bits = r.next() & bits;
            }
            if n > 2 && r.below(8) == 0 {
                // Lanes below 0 or past the end, masked off.
                let k = 1 + r.below(2) as i64;
                if r.below(2) == 0 {
                    off = -4 * k;
                    bits &= !((1u64 << k) - 1);
                } else {
                    off = BYTES - 4 * (n as i64 - k);
                    bits &= (1u64 << (n as i64 - k)) - 1;
                }
            }
            let ty = vec_ty(n);
            t += 1;
            let addr = format!("%a{t}");
            let _ = writeln!(
                f,
                "  %o{t} = add i64 %b, {off}\n  {addr} = inttoptr i64 %o{t} to {ty}*"
            );
            let dyn_mask = n >= 8 && r.below(3) == 0;
            let mask = if dyn_mask {
                format!("<{n} x i1> %dm{n}")
            } else {
                mask_lit(n, bits)
            };
            let masked = n > 1 && (dyn_mask || bits != (1u64 << n) - 1 || r.below(3) == 0);
            let all_in = (0..BYTES).contains(&off) && off + 4 * n as i64 <= BYTES;
            match kind {
                0..=18 => {
                    // Load.
                    if masked && (all_in || !dyn_mask) {
                        let _ = writeln!(
                            f,
                            "  %v{t} = call {ty} @llvm.masked.load.v{n}i32.p0v{n}i32({ty}* {addr}, i32 4, {mask}, {ty} <{}>)",
                            (0..n).map(|e| format!("i32 {}", 7000 + e)).collect::<Vec<_>>().join(", ")
                        );
                    } else if all_in {
                        let _ = writeln!(f, "  %v{t} = load {ty}, {ty}* {addr}, align 4");
                    } else {
                        continue;
                    }
                    let _ = writeln!(
                        f,
                        "  %s{t} = getelementptr i8, i8* %states, i64 {}\n  %sp{t} = bitcast i8* %s{t} to {ty}*\n  store {ty} %v{t}, {ty}* %sp{t}, align 4",
                        out * 4
                    );
                    out += n as usize;
                    vals.push((n, format!("%v{t}")));
                }
                19..=36 => {
                    // Store: an earlier value of the same width plus one,
                    // or a constant.
                    let v = match vals.iter().rev().find(|(m, _)| *m == n) {
                        Some((_, v)) if r.below(3) != 0 => {
                            let one = if n == 1 {
                                "1".to_string()
                            } else {
                                format!("<{}>", vec!["i32 1"; n as usize].join(", "))
                            };
                            let _ = writeln!(f, "  %w{t} = add {ty} {v}, {one}");
                            format!("%w{t}")
                        }
                        _ if n == 1 => format!("{}", 100 + t),
                        _ => format!(
                            "<{}>",
                            (0..n)
                                .map(|e| format!("i32 {}", 1000 * t as u32 + e))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    if masked && (all_in || !dyn_mask) {
                        let _ = writeln!(
                            f,
                            "  call void @llvm.masked.store.v{n}i32.p0v{n}i32({ty} {v}, {ty}* {addr}, i32 4, {mask})"
                        );
                    } else if all_in {
                        let _ = writeln!(f, "  store {ty} {v}, {ty}* {addr}, align 4");
                    }
                }
                37 => {
                    // A byte store into shared memory: not mirrored.
                    let at = r.below(BYTES as u64);
                    let _ = writeln!(f, "  %y{t} = add i64 %b, {at}\n  %yp{t} = inttoptr i64 %y{t} to i8*\n  store i8 {}, i8* %yp{t}", t % 200);
                }
                38 => {
                    // A store through an address the pass cannot tell from
                    // shared memory (it is shared memory).
                    let at = 4 * r.below(words);
                    let _ = writeln!(f, "  %z{t} = add i64 %alias, {at}\n  %zp{t} = inttoptr i64 %z{t} to i32*\n  store i32 {}, i32* %zp{t}", 5000 + t);
                }
                _ => {
                    // A global store of a word read from shared memory
                    // through an unrecognised address.
                    let at = 4 * r.below(words);
                    let _ = writeln!(
                        f,
                        "  %q{t} = add i64 %alias, {at}\n  %qp{t} = inttoptr i64 %q{t} to i32*\n  %qv{t} = load i32, i32* %qp{t}\n  %gg{t} = add i64 %g, {}\n  %gq{t} = inttoptr i64 %gg{t} to i32*\n  store i32 %qv{t}, i32* %gq{t}",
                        4 * (t % 64)
                    );
                }
            }
        }
        match end {
            End::Plain => f.push_str("  ret i32 0\n"),
            End::Done => f.push_str(
                "  br label %done\ndone:\n  store i32 0, i32* %runp\n  br label %out\nout:\n  ret i32 0\n",
            ),
            End::Running => f.push_str("  store i32 1, i32* %runp\n  ret i32 0\n"),
        }
        f.push_str("}\n\n!0 = !{}\n");
        for n in [4u32, 8, 16, 32] {
            let ty = vec_ty(n);
            let _ = writeln!(
                f,
                "declare {ty} @llvm.masked.load.v{n}i32.p0v{n}i32({ty}*, i32, <{n} x i1>, {ty})"
            );
            let _ = writeln!(
                f,
                "declare void @llvm.masked.store.v{n}i32.p0v{n}i32({ty}, {ty}*, i32, <{n} x i1>)"
            );
        }
        f
    }

    /// Shared bytes (with the guard), global words and state after a run,
    /// and the accesses kept in registers and write-backs dropped.
    fn run(ir: &str, regs: bool, mask: u64) -> (Vec<u8>, Vec<u32>, Vec<u32>, usize, usize) {
        let before = super::PROMOTED.with(|c| c.get());
        let dropped_before = super::DROPPED.with(|c| c.get());
        let obj = codegen_with(ir, regs.then_some(BYTES as u64)).expect("compiles");
        let promoted = super::PROMOTED.with(|c| c.get()) - before;
        let dropped = super::DROPPED.with(|c| c.get()) - dropped_before;
        let f = load_objects(&[obj], &[]).expect("links");
        let mut shared: Vec<u8> = (0..BYTES as usize + GUARD)
            .map(|i| (i * 13 % 251) as u8)
            .collect();
        let mut global = vec![0u32; 64];
        let mut state = vec![0u32; 32 * 4096];
        let env = [
            0u64,
            shared.as_mut_ptr() as u64,
            global.as_mut_ptr() as u64,
            shared.as_mut_ptr() as u64,
            mask,
        ];
        let (mut a, mut b, mut c) = (0u32, 0u32, 0u32);
        // SAFETY: the function reads and writes only the buffers above
        // (offsets checked by construction in `program`).
        unsafe {
            f(
                state.as_mut_ptr() as *mut u8,
                env.as_ptr(),
                0,
                &mut a,
                &mut b,
                &mut c,
            )
        };
        (shared, global, state, promoted, dropped)
    }

    #[test]
    fn random_access_sequences_agree_with_and_without_the_pass() {
        for end in [End::Plain, End::Running] {
            let mut promoted = 0;
            for seed in 0..60u64 {
                let ir = program(seed, 80, end);
                let mask = Rng(seed ^ 0x5eed).next() * 0x9e3779b97f4a7c15;
                let want = run(&ir, false, mask);
                assert_eq!(want.3, 0);
                let got = run(&ir, true, mask);
                promoted += got.3;
                assert_eq!(
                    got.4, 0,
                    "seed {seed}: the CTA goes on, yet writes were dropped"
                );
                assert!(got.0 == want.0, "seed {seed}: shared bytes differ\n{ir}");
                assert!(got.1 == want.1, "seed {seed}: global words differ\n{ir}");
                assert!(got.2 == want.2, "seed {seed}: loaded values differ\n{ir}");
            }
            // The sequences are what the pass is for: most accesses kept.
            assert!(
                promoted > 60 * 10,
                "only {promoted} accesses kept in registers"
            );
        }
    }

    /// A block of eight stores to one shared chunk, then a load of a
    /// global word (`mark`: marked as a read of the global space), ending
    /// the CTA. Returns the loaded word as the state holds it and the
    /// write-backs dropped.
    fn global_read_then_done(mark: bool) -> (u32, usize) {
        let md = if mark {
            format!(", !{} !0", super::GLOBAL_READ)
        } else {
            String::new()
        };
        let mut f = format!("{UNROLLED_MARK}\n{SHARED_BYTES_MARK}{BYTES}\n");
        f.push_str("define i32 @wf_cta(i8* noalias %states, i64* %env, i64 %sb, i32* noalias %runp, i32* noalias %fresh, i32* noalias %codes) {\nentry:\n");
        f.push_str("  %bp = getelementptr i64, i64* %env, i64 1\n  %b = load i64, i64* %bp, align 8, !invariant.load !0\n");
        f.push_str("  %gp = getelementptr i64, i64* %env, i64 2\n  %g = load i64, i64* %gp, align 8, !invariant.load !0\n");
        f.push_str("  %a = inttoptr i64 %b to i32*\n");
        for k in 0..8 {
            let _ = writeln!(f, "  store i32 {k}, i32* %a, align 4");
        }
        let _ = writeln!(
            f,
            "  %gw = inttoptr i64 %g to i32*\n  %x = load i32, i32* %gw, align 4{md}\n  %sp = bitcast i8* %states to i32*\n  store i32 %x, i32* %sp, align 4"
        );
        f.push_str("  br label %done\ndone:\n  store i32 0, i32* %runp\n  br label %out\nout:\n  ret i32 0\n}\n\n!0 = !{}\n");
        let (_, _, state, _, dropped) = run(&f, true, 0);
        (state[0], dropped)
    }

    /// A read of the global space does not make the pass write its
    /// mirror back first (it cannot read shared memory): the CTA then ends
    /// with the chunk still dirty, and the write is dropped.
    #[test]
    fn a_global_read_leaves_the_mirror_dirty() {
        let (x, dropped) = global_read_then_done(true);
        assert_eq!((x, dropped), (0, 1));
        // Unmarked, the load may read shared memory: written back before.
        let (x, dropped) = global_read_then_done(false);
        assert_eq!((x, dropped), (0, 0));
    }

    /// Where the CTA ends, what it writes to shared memory after its last
    /// read of it may be dropped; everything it reads, loads into its
    /// state or stores to global memory stays as without the pass.
    #[test]
    fn a_finished_cta_drops_only_writes_nothing_reads() {
        let mut dropped = 0;
        for seed in 0..60u64 {
            let ir = program(seed, 80, End::Done);
            let mask = Rng(seed ^ 0x5eed).next() * 0x9e3779b97f4a7c15;
            let want = run(&ir, false, mask);
            let got = run(&ir, true, mask);
            dropped += got.4;
            assert!(got.1 == want.1, "seed {seed}: global words differ\n{ir}");
            assert!(got.2 == want.2, "seed {seed}: loaded values differ\n{ir}");
            // Nothing beyond the shared array is touched.
            let n = BYTES as usize;
            assert!(
                got.0[n..] == want.0[n..],
                "seed {seed}: guard bytes changed"
            );
        }
        assert!(dropped > 60, "only {dropped} write-backs dropped");
    }
}
