//! Kernel arguments and the checks that keep a mismatched launch from
//! running: count, size and kind of every parameter.

use crate::{Buffer, Error, Result};
use warpfold_ir::{Function, Ty};

/// One kernel argument.
pub enum Arg<'a> {
    /// A device buffer, passed as its address (a pointer parameter).
    Buffer(&'a Buffer),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    /// Raw bytes for a by-value aggregate (`.param .align 8 .b8 p[N]`).
    Bytes(Vec<u8>),
}

impl Arg<'_> {
    fn describe(&self) -> String {
        match self {
            Arg::Buffer(b) => format!("buffer of {} bytes", b.len_bytes()),
            Arg::I8(v) => format!("i8 {v}"),
            Arg::I16(v) => format!("i16 {v}"),
            Arg::I32(v) => format!("i32 {v}"),
            Arg::I64(v) => format!("i64 {v}"),
            Arg::U8(v) => format!("u8 {v}"),
            Arg::U16(v) => format!("u16 {v}"),
            Arg::U32(v) => format!("u32 {v}"),
            Arg::U64(v) => format!("u64 {v}"),
            Arg::F32(v) => format!("f32 {v}"),
            Arg::F64(v) => format!("f64 {v}"),
            Arg::Bytes(b) => format!("{} raw bytes", b.len()),
        }
    }

    /// (bytes, is float, is pointer)
    fn bytes(&self) -> (Vec<u8>, bool, bool) {
        match self {
            Arg::Buffer(b) => (b.device_ptr().to_le_bytes().to_vec(), false, true),
            Arg::I8(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::I16(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::I32(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::I64(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::U8(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::U16(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::U32(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::U64(v) => (v.to_le_bytes().to_vec(), false, false),
            Arg::F32(v) => (v.to_le_bytes().to_vec(), true, false),
            Arg::F64(v) => (v.to_le_bytes().to_vec(), true, false),
            Arg::Bytes(b) => (b.clone(), false, false),
        }
    }
}

pub(crate) fn pack(f: &Function, args: &[Arg]) -> Result<Vec<u8>> {
    let err = |message: String| Error::Arguments {
        signature: f.signature(),
        message,
    };
    if args.len() != f.params.len() {
        return Err(err(format!(
            "the kernel takes {} arguments, {} given",
            f.params.len(),
            args.len()
        )));
    }
    let mut buf = vec![0u8; f.param_bytes as usize];
    for (i, (a, p)) in args.iter().zip(&f.params).enumerate() {
        let (bytes, is_float, is_ptr) = a.bytes();
        let what = || format!("argument {i} ({}) for parameter `{}`", a.describe(), p.name);
        if let Some(n) = p.array {
            if !matches!(a, Arg::Bytes(_)) {
                return Err(err(format!(
                    "{}: an aggregate of {n} bytes needs raw bytes",
                    what()
                )));
            }
        }
        if bytes.len() as u64 != p.size {
            return Err(err(format!(
                "{} has {} bytes, the parameter {}",
                what(),
                bytes.len(),
                p.size
            )));
        }
        if p.array.is_none() {
            if is_ptr && (p.ty.is_float() || p.size != 8) {
                return Err(err(format!(
                    "{}: a buffer needs a 64-bit integer (pointer) parameter, this one is .{}",
                    what(),
                    p.ty
                )));
            }
            // .b types take anything of the right size; .f and .u/.s must match in kind.
            let bits_only = matches!(p.ty, Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64);
            if !bits_only && p.ty.is_float() != is_float {
                return Err(err(format!("{}: the parameter is .{}", what(), p.ty)));
            }
        }
        let at = p.offset as usize;
        buf[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(buf)
}
