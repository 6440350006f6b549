//! A module placed on a device: its `.global` variables allocated and
//! initialised, its `.const` bank built, relocations resolved.

use crate::memory::{DeviceMemory, MemoryError, CONST_WINDOW, FUNC_WINDOW, SHARED_WINDOW};
use std::collections::HashMap;
use std::sync::Arc;
use warpfold_ir::shared::{shared_layout, SharedLayout};
use warpfold_ir::{FuncId, GlobalId, Module, RelocTarget, Space};

#[derive(Debug)]
pub struct Instance {
    module: Arc<Module>,
    /// Address of each global variable (0 for non-`.global` ones).
    global_addr: Vec<u64>,
    const_bank: Vec<u8>,
    shared: HashMap<FuncId, SharedLayout>,
}

impl Instance {
    pub fn new(module: Arc<Module>, mem: &DeviceMemory) -> Result<Self, MemoryError> {
        let mut global_addr = vec![0u64; module.globals.len()];
        let mut allocs = Vec::new();
        for (id, g) in module.globals.iter() {
            if g.space == Space::Global {
                let a = mem.alloc(g.size.max(1))?;
                global_addr[id.0 as usize] = a.base;
                allocs.push((id, a));
            }
        }
        let const_size = module
            .globals
            .values()
            .filter(|g| g.space == Space::Const)
            .map(|g| g.offset + g.size)
            .max()
            .unwrap_or(0);
        let mut const_bank = vec![0u8; const_size as usize];
        let addr_of = |id: GlobalId, generic: bool| -> u64 {
            let g = &module.globals[id];
            match g.space {
                Space::Global => global_addr[id.0 as usize],
                Space::Const => g.offset + if generic { CONST_WINDOW } else { 0 },
                Space::Shared => {
                    warpfold_ir::shared::pinned_offset(&module, id).unwrap_or(0)
                        + if generic { SHARED_WINDOW } else { 0 }
                }
                _ => 0,
            }
        };
        for (id, g) in module.globals.iter() {
            let mut bytes = g.init.clone();
            for r in &g.relocs {
                let base = match r.target {
                    RelocTarget::Global(t) => {
                        addr_of(t, r.generic || module.globals[t].space == Space::Global)
                    }
                    RelocTarget::Function(f) => FUNC_WINDOW + 16 * u64::from(f.0),
                };
                let v = base.wrapping_add(r.addend as u64);
                let at = r.at as usize;
                let n = r.bytes.min(8) as usize;
                if let Some(dst) = bytes.get_mut(at..at + n) {
                    dst.copy_from_slice(&v.to_le_bytes()[..n]);
                }
            }
            match g.space {
                Space::Global => {
                    if let Some((_, a)) = allocs.iter().find(|(i, _)| *i == id) {
                        a.write_bytes(&bytes);
                    }
                }
                Space::Const => {
                    let off = g.offset as usize;
                    const_bank[off..off + bytes.len()].copy_from_slice(&bytes);
                }
                _ => {}
            }
        }
        let shared = module
            .kernels()
            .map(|(k, _)| (k, shared_layout(&module, k)))
            .collect();
        Ok(Instance {
            module,
            global_addr,
            const_bank,
            shared,
        })
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    pub fn global_addr(&self, id: GlobalId) -> u64 {
        self.global_addr.get(id.0 as usize).copied().unwrap_or(0)
    }

    pub fn const_bank(&self) -> &[u8] {
        &self.const_bank
    }

    /// The shared-memory layout of a kernel of this module.
    pub fn shared_layout(&self, kernel: FuncId) -> Option<&SharedLayout> {
        self.shared.get(&kernel)
    }
}
