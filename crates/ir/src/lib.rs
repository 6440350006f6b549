//! warpfold IR: a typed register CFG per function, with address spaces and
//! the SIMT operations (warp shuffles, votes, barriers) as instructions.
//! Registers are PTX's virtual registers (raw bits, typed by the operation);
//! backends that want SSA build it from this form.

pub mod entity;
pub mod inline;
pub mod inst;
pub mod module;
pub mod print;
pub mod shared;
pub mod types;
pub mod verify;

pub use entity::{Arena, BlockId, EntityRef, FuncId, GlobalId, LocalId, Reg};
pub use inst::*;
pub use module::*;
pub use types::*;
pub use verify::{verify_module, VerifyError};
