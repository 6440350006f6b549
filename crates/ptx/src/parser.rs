//! Recursive-descent parser (to be written).
use crate::ast::Module;
use crate::diag::Diagnostics;

/// Parse a whole PTX module.
pub fn parse(_src: &str) -> Result<Module, Diagnostics> {
    todo!()
}
