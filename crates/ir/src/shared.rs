//! Shared-memory layout per kernel: only the `.shared` variables a kernel
//! can reach (through its code and its callees) take space in its CTAs, so
//! a module with several kernels does not give each the others' arrays, and
//! an overrun of one array is not hidden by another kernel's.

use crate::entity::{FuncId, GlobalId};
use crate::inst::{AddrBase, InstKind, Symbol};
use crate::module::{Module, RelocTarget};
use crate::types::Space;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedLayout {
    /// Offset of each static shared variable the kernel uses.
    pub offsets: HashMap<GlobalId, u64>,
    /// Bytes of static shared memory; dynamic shared memory starts at the
    /// next 16-byte boundary.
    pub static_bytes: u64,
}

impl SharedLayout {
    pub fn dynamic_base(&self) -> u64 {
        self.static_bytes.div_ceil(16) * 16
    }
}

fn symbols_of(kind: &InstKind, out: &mut Vec<Symbol>) {
    match kind {
        InstKind::AddrOf { sym, .. } => out.push(*sym),
        InstKind::Ld { addr, .. } | InstKind::St { addr, .. } | InstKind::Atom { addr, .. } => {
            if let AddrBase::Symbol(s) = addr.base {
                out.push(s);
            }
        }
        _ => {}
    }
}

/// Functions whose address is taken (in code or in initialised variables):
/// what a call through a pointer can reach.
pub fn address_taken(m: &Module) -> BTreeSet<FuncId> {
    let mut address_taken: BTreeSet<FuncId> = BTreeSet::new();
    for g in m.globals.values() {
        for r in &g.relocs {
            if let RelocTarget::Function(f) = r.target {
                address_taken.insert(f);
            }
        }
    }
    for f in m.functions.values() {
        for b in f.blocks.values() {
            for i in &b.insts {
                if let InstKind::AddrOf {
                    sym: Symbol::Function(t),
                    ..
                } = i.kind
                {
                    address_taken.insert(t);
                }
            }
        }
    }
    address_taken
}

/// Functions `kernel` can run: direct callees, and every function whose
/// address is taken anywhere once an indirect call is reachable.
pub fn reachable(m: &Module, kernel: FuncId) -> BTreeSet<FuncId> {
    let address_taken = address_taken(m);
    let mut seen = BTreeSet::new();
    let mut work = vec![kernel];
    while let Some(f) = work.pop() {
        if !seen.insert(f) {
            continue;
        }
        let Some(func) = m.functions.get(f) else {
            continue;
        };
        for b in func.blocks.values() {
            for i in &b.insts {
                match &i.kind {
                    InstKind::Call { func, .. } => work.push(*func),
                    InstKind::CallIndirect { .. } => work.extend(address_taken.iter().copied()),
                    _ => {}
                }
            }
        }
    }
    seen
}

/// Lay out the static shared variables `kernel` uses. Variables whose
/// address is stored in an initialiser come first, at the same offsets in
/// every kernel, since the stored address cannot depend on the kernel.
pub fn shared_layout(m: &Module, kernel: FuncId) -> SharedLayout {
    let is_static_shared = |g: GlobalId| {
        m.globals
            .get(g)
            .is_some_and(|v| v.space == Space::Shared && !v.dynamic)
    };
    let mut pinned: BTreeSet<GlobalId> = BTreeSet::new();
    for g in m.globals.values() {
        for r in &g.relocs {
            if let RelocTarget::Global(t) = r.target {
                if is_static_shared(t) {
                    pinned.insert(t);
                }
            }
        }
    }
    let mut used: BTreeSet<GlobalId> = BTreeSet::new();
    for f in reachable(m, kernel) {
        let Some(func) = m.functions.get(f) else {
            continue;
        };
        let mut syms = Vec::new();
        for b in func.blocks.values() {
            for i in &b.insts {
                symbols_of(&i.kind, &mut syms);
            }
        }
        for s in syms {
            if let Symbol::Global(g) = s {
                if is_static_shared(g) && !pinned.contains(&g) {
                    used.insert(g);
                }
            }
        }
    }
    let mut layout = SharedLayout::default();
    let mut end = 0u64;
    for g in pinned.iter().chain(used.iter()) {
        let v = &m.globals[*g];
        let align = u64::from(v.align.max(1));
        let off = end.div_ceil(align) * align;
        layout.offsets.insert(*g, off);
        end = off + v.size;
    }
    layout.static_bytes = end;
    layout
}

/// The offset every kernel gives a pinned (address-taken) shared variable.
pub fn pinned_offset(m: &Module, g: GlobalId) -> Option<u64> {
    // Any kernel's layout has the pinned variables first and identical.
    let (k, _) = m.kernels().next()?;
    shared_layout(m, k).offsets.get(&g).copied()
}
