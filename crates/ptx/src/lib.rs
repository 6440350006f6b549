//! PTX front end: text to syntax tree (`parse`) and syntax tree to warpfold
//! IR (`lower`). Errors are `Diagnostic`s with line:column.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;

pub use diag::{Diagnostic, Diagnostics};
pub use lower::{load, load_with, lower, lower_with};
pub use parser::parse;
