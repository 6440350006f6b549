//! Modules, functions, blocks and the variables they own.

use crate::entity::{Arena, BlockId, FuncId, GlobalId, LocalId, Reg};
use crate::inst::{Inst, Terminator};
use crate::types::{Space, Ty};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// PTX `.version` and `.target`, for information.
    pub ptx_version: (u32, u32),
    pub target: String,
    pub globals: Arena<GlobalId, Global>,
    pub functions: Arena<FuncId, Function>,
}

impl Module {
    pub fn kernels(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions.iter().filter(|(_, f)| f.is_kernel)
    }

    pub fn kernel(&self, name: &str) -> Option<(FuncId, &Function)> {
        self.kernels().find(|(_, f)| f.name == name)
    }

    /// Bytes of static shared memory a kernel needs (all module shared
    /// variables; they are few and this keeps addresses stable across kernels).
    pub fn static_shared_bytes(&self) -> u64 {
        self.globals
            .values()
            .filter(|g| g.space == Space::Shared && !g.dynamic)
            .map(|g| g.offset + g.size)
            .max()
            .unwrap_or(0)
    }
}

/// A module-scope variable (function-scope `.shared`/`.global`/`.const`
/// variables are hoisted here by the front end, as their lifetime is the
/// kernel's, not the call's).
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    pub name: String,
    pub space: Space,
    pub size: u64,
    pub align: u32,
    /// Offset within its space's segment (shared, const); globals get their
    /// own allocation and keep 0 here.
    pub offset: u64,
    /// Initial bytes (zero-filled to `size`); shared variables have none.
    pub init: Vec<u8>,
    /// Addresses of other variables stored into `init` at load time.
    pub relocs: Vec<Reloc>,
    /// `.extern .shared x[]`: the dynamic shared memory, at the end of the
    /// static shared segment.
    pub dynamic: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reloc {
    pub at: u64,
    pub target: RelocTarget,
    pub addend: i64,
    pub generic: bool,
    pub bytes: u32,
}

/// What an initialiser stores the address of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelocTarget {
    Global(GlobalId),
    /// A device function (function-pointer tables).
    Function(FuncId),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RegInfo {
    pub name: String,
    pub ty: Ty,
}

/// A variable in the thread's local frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    pub name: String,
    pub offset: u64,
    pub size: u64,
    pub align: u32,
}

/// A kernel or device-function parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// Element type; for a by-value aggregate `.b8 p[40]` the type is `B8`
    /// and `array` is `Some(40)`.
    pub ty: Ty,
    pub array: Option<u64>,
    pub align: u32,
    /// Byte size in the parameter buffer.
    pub size: u64,
    /// Offset in the kernel parameter buffer (kernels only).
    pub offset: u64,
    /// A pointer annotation (`.ptr .global`), when the PTX gives one.
    pub ptr_space: Option<Space>,
    /// For device functions: where the parameter lives in the callee's
    /// frame, or the register it is bound to (`.reg` parameters).
    pub binding: ParamBinding,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamBinding {
    KernelBuffer,
    Local(LocalId),
    Reg(Reg),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub name: Option<String>,
    pub insts: Vec<Inst>,
    pub term: Option<Terminator>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub is_kernel: bool,
    pub params: Vec<Param>,
    pub returns: Vec<Param>,
    pub regs: Arena<Reg, RegInfo>,
    pub locals: Arena<LocalId, Local>,
    /// Bytes of the local frame (all `locals`).
    pub frame_size: u64,
    pub blocks: Arena<BlockId, Block>,
    /// Blocks are kept in source order; the first is the entry.
    pub entry: BlockId,
    /// Kernel parameter buffer size (kernels only).
    pub param_bytes: u64,
    /// `.reqntid`/`.maxntid`, if given.
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// Source line of the declaration.
    pub line: u32,
}

impl Function {
    pub fn new(name: impl Into<String>, is_kernel: bool) -> Self {
        Function {
            name: name.into(),
            is_kernel,
            params: Vec::new(),
            returns: Vec::new(),
            regs: Arena::new(),
            locals: Arena::new(),
            frame_size: 0,
            blocks: Arena::new(),
            entry: BlockId(0),
            param_bytes: 0,
            reqntid: None,
            maxntid: None,
            line: 0,
        }
    }

    /// Add a local frame variable, aligned.
    pub fn add_local(&mut self, name: impl Into<String>, size: u64, align: u32) -> LocalId {
        let align = u64::from(align.max(1));
        let offset = self.frame_size.div_ceil(align).saturating_mul(align);
        self.frame_size = offset.saturating_add(size);
        self.locals.push(Local {
            name: name.into(),
            offset,
            size,
            align: align as u32,
        })
    }

    /// The signature as PTX-like text: `name(.u64 a, .b8 s[16])`.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| match p.array {
                Some(n) => format!(".{} {}[{}]", p.ty, p.name, n),
                None => match p.ptr_space {
                    Some(s) => format!(".{} .ptr.{} {}", p.ty, s, p.name),
                    None => format!(".{} {}", p.ty, p.name),
                },
            })
            .collect();
        format!("{}({})", self.name, params.join(", "))
    }
}
