//! Host-side data for launches described as text: the `--arg SPEC` syntax
//! shared by the CLI and the test corpus, and NumPy `.npy` files.
//!
//! ```text
//! SPEC := TYPE=VALUE          scalar; TYPE is i8 i16 i32 i64 u8 u16 u32 u64 f32 f64
//!       | @PATH.npy           device buffer initialised from a .npy file
//!       | zeros:DTYPE:COUNT   device buffer of COUNT zeroed elements
//!       | raw:PATH            bytes passed by value (aggregate parameters)
//! ```

use crate::{Arg, Buffer, Device, Error, Result};
use std::path::{Path, PathBuf};

/// Element types of buffers and scalars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl Dtype {
    pub fn parse(s: &str) -> Option<Dtype> {
        Some(match s {
            "i8" => Dtype::I8,
            "i16" => Dtype::I16,
            "i32" => Dtype::I32,
            "i64" => Dtype::I64,
            "u8" => Dtype::U8,
            "u16" => Dtype::U16,
            "u32" => Dtype::U32,
            "u64" => Dtype::U64,
            "f32" => Dtype::F32,
            "f64" => Dtype::F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I16 | Dtype::U16 => 2,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::U64 | Dtype::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F64)
    }

    /// Format element `i` of little-endian `bytes` for people.
    pub fn format(self, bytes: &[u8], i: usize) -> String {
        let s = self.size();
        let Some(b) = bytes.get(i * s..(i + 1) * s) else {
            return "?".into();
        };
        let mut w = [0u8; 8];
        w[..s].copy_from_slice(b);
        let u = u64::from_le_bytes(w);
        match self {
            Dtype::I8 => (u as i8).to_string(),
            Dtype::I16 => (u as i16).to_string(),
            Dtype::I32 => (u as i32).to_string(),
            Dtype::I64 => (u as i64).to_string(),
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => u.to_string(),
            Dtype::F32 => format!("{:?}", f32::from_bits(u as u32)),
            Dtype::F64 => format!("{:?}", f64::from_bits(u)),
        }
    }
}

/// An n-dimensional array in host memory, little-endian, C order.
#[derive(Debug, Clone, PartialEq)]
pub struct HostArray {
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub bytes: Vec<u8>,
}

impl HostArray {
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A parsed `--arg`.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    Scalar { dtype: Dtype, bits: u64 },
    Npy(PathBuf),
    Zeros { dtype: Dtype, count: u64 },
    Raw(PathBuf),
}

fn parse_int(v: &str, dtype: Dtype) -> Option<u64> {
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let mag: u128 = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u128::from_str_radix(h, 16).ok()?
    } else {
        body.parse().ok()?
    };
    let bits = dtype.size() as u32 * 8;
    let signed = matches!(dtype, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64);
    let value: i128 = if neg { -(mag as i128) } else { mag as i128 };
    let (lo, hi): (i128, i128) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else if neg {
        return None;
    } else {
        (0, (1i128 << bits) - 1)
    };
    // Hex literals give raw bits, so 0xffffffff is a valid i32 (-1).
    if body.starts_with("0x") || body.starts_with("0X") {
        if neg || mag >> bits != 0 {
            return None;
        }
        return Some(mag as u64);
    }
    if value < lo || value > hi {
        return None;
    }
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    Some(value as u64 & m)
}

fn parse_float(v: &str, dtype: Dtype) -> Option<u64> {
    if let Some(h) = v.strip_prefix("0x") {
        let bits = u64::from_str_radix(h, 16).ok()?;
        if dtype == Dtype::F32 && bits > u64::from(u32::MAX) {
            return None;
        }
        return Some(bits);
    }
    let x: f64 = match v.to_ascii_lowercase().as_str() {
        "nan" => f64::NAN,
        "inf" | "+inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    Some(if dtype == Dtype::F32 {
        u64::from((x as f32).to_bits())
    } else {
        x.to_bits()
    })
}

impl ArgSpec {
    pub fn parse(spec: &str) -> Result<ArgSpec, String> {
        if let Some(p) = spec.strip_prefix('@') {
            if p.is_empty() {
                return Err("`@` needs a path to a .npy file".into());
            }
            return Ok(ArgSpec::Npy(PathBuf::from(p)));
        }
        if let Some(p) = spec.strip_prefix("raw:") {
            if p.is_empty() {
                return Err("`raw:` needs a path".into());
            }
            return Ok(ArgSpec::Raw(PathBuf::from(p)));
        }
        if let Some(rest) = spec.strip_prefix("zeros:") {
            let (d, n) = rest.split_once(':').ok_or("expected zeros:DTYPE:COUNT")?;
            let dtype = Dtype::parse(d).ok_or_else(|| {
                format!("unknown dtype `{d}` (use i8 i16 i32 i64 u8 u16 u32 u64 f32 f64)")
            })?;
            let count: u64 = n.parse().map_err(|_| format!("bad element count `{n}`"))?;
            if count.saturating_mul(dtype.size() as u64) > 1 << 36 {
                return Err(format!("{count} elements is too large"));
            }
            return Ok(ArgSpec::Zeros { dtype, count });
        }
        if let Some((t, v)) = spec.split_once('=') {
            let dtype = Dtype::parse(t).ok_or_else(|| {
                format!("unknown scalar type `{t}` (use i8 i16 i32 i64 u8 u16 u32 u64 f32 f64)")
            })?;
            let bits = if dtype.is_float() {
                parse_float(v, dtype)
            } else {
                parse_int(v, dtype)
            };
            let bits = bits.ok_or_else(|| format!("`{v}` is not a valid {t} value"))?;
            return Ok(ArgSpec::Scalar { dtype, bits });
        }
        Err(format!("cannot read argument `{spec}`: expected TYPE=VALUE, @FILE.npy, zeros:DTYPE:COUNT or raw:FILE"))
    }
}

/// A materialised argument: what the launch passes, plus what to write back.
pub enum Prepared {
    Scalar {
        dtype: Dtype,
        bits: u64,
    },
    Buffer {
        buffer: Buffer,
        dtype: Dtype,
        shape: Vec<u64>,
        initial: Vec<u8>,
    },
    Raw(Vec<u8>),
}

impl Prepared {
    pub fn as_arg(&self) -> Arg<'_> {
        match self {
            Prepared::Buffer { buffer, .. } => Arg::Buffer(buffer),
            Prepared::Raw(b) => Arg::Bytes(b.clone()),
            Prepared::Scalar { dtype, bits } => match dtype {
                Dtype::I8 => Arg::I8(*bits as i8),
                Dtype::I16 => Arg::I16(*bits as i16),
                Dtype::I32 => Arg::I32(*bits as i32),
                Dtype::I64 => Arg::I64(*bits as i64),
                Dtype::U8 => Arg::U8(*bits as u8),
                Dtype::U16 => Arg::U16(*bits as u16),
                Dtype::U32 => Arg::U32(*bits as u32),
                Dtype::U64 => Arg::U64(*bits),
                Dtype::F32 => Arg::F32(f32::from_bits(*bits as u32)),
                Dtype::F64 => Arg::F64(f64::from_bits(*bits)),
            },
        }
    }

    /// Put a buffer back to its initial contents (for repeated launches).
    pub fn reset(&self) -> Result<()> {
        if let Prepared::Buffer {
            buffer, initial, ..
        } = self
        {
            buffer.write(initial)?;
        }
        Ok(())
    }
}

impl ArgSpec {
    /// Create the device data for this argument; relative paths are taken
    /// from `base`.
    pub fn prepare(&self, dev: &Device, base: &Path) -> Result<Prepared> {
        match self {
            ArgSpec::Scalar { dtype, bits } => Ok(Prepared::Scalar {
                dtype: *dtype,
                bits: *bits,
            }),
            ArgSpec::Zeros { dtype, count } => {
                let bytes = *count as usize * dtype.size();
                let buffer = dev.buffer_zeroed(bytes)?;
                Ok(Prepared::Buffer {
                    buffer,
                    dtype: *dtype,
                    shape: vec![*count],
                    initial: vec![0; bytes],
                })
            }
            ArgSpec::Npy(p) => {
                let path = base.join(p);
                let a = read_npy(&path)?;
                let buffer = dev.buffer_zeroed(a.bytes.len())?;
                buffer.write(&a.bytes)?;
                Ok(Prepared::Buffer {
                    buffer,
                    dtype: a.dtype,
                    shape: a.shape,
                    initial: a.bytes,
                })
            }
            ArgSpec::Raw(p) => {
                let path = base.join(p);
                std::fs::read(&path)
                    .map(Prepared::Raw)
                    .map_err(|e| Error::Buffer(format!("cannot read {}: {e}", path.display())))
            }
        }
    }
}

/// Read a `.npy` file of a plain numeric dtype (bool reads as u8).
pub fn read_npy(path: &Path) -> Result<HostArray> {
    let bad = |m: String| Error::Buffer(format!("{}: {m}", path.display()));
    let data = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let npy =
        npyz::NpyFile::new(&data[..]).map_err(|e| bad(format!("not a valid .npy file ({e})")))?;
    if npy.order() == npyz::Order::Fortran {
        return Err(bad(
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into(),
        ));
    }
    let shape = npy.shape().to_vec();
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(bad(format!(
            "dtype {} is not a plain numeric type",
            npy.dtype().descr()
        )));
    };
    use npyz::TypeChar as C;
    let dtype = match (ts.type_char(), ts.size_field()) {
        (C::Int, 1) => Dtype::I8,
        (C::Int, 2) => Dtype::I16,
        (C::Int, 4) => Dtype::I32,
        (C::Int, 8) => Dtype::I64,
        (C::Uint, 1) | (C::Bool, 1) => Dtype::U8,
        (C::Uint, 2) => Dtype::U16,
        (C::Uint, 4) => Dtype::U32,
        (C::Uint, 8) => Dtype::U64,
        (C::Float, 4) => Dtype::F32,
        (C::Float, 8) => Dtype::F64,
        _ => {
            return Err(bad(format!(
                "dtype {ts} is not supported (use int8..64, uint8..64, float32, float64)"
            )))
        }
    };
    let err = |e: std::io::Error| bad(format!("cannot read the data ({e})"));
    macro_rules! read {
        ($t:ty) => {{
            let v: Vec<$t> = npy.into_vec::<$t>().map_err(err)?;
            v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()
        }};
    }
    let bytes = match (ts.type_char(), dtype) {
        (C::Bool, _) => npy
            .into_vec::<bool>()
            .map_err(err)?
            .into_iter()
            .map(u8::from)
            .collect(),
        (_, Dtype::I8) => read!(i8),
        (_, Dtype::I16) => read!(i16),
        (_, Dtype::I32) => read!(i32),
        (_, Dtype::I64) => read!(i64),
        (_, Dtype::U8) => read!(u8),
        (_, Dtype::U16) => read!(u16),
        (_, Dtype::U32) => read!(u32),
        (_, Dtype::U64) => read!(u64),
        (_, Dtype::F32) => read!(f32),
        (_, Dtype::F64) => read!(f64),
    };
    Ok(HostArray {
        dtype,
        shape,
        bytes,
    })
}

/// Write an array as `.npy`, through a temporary file so a failure never
/// leaves a half-written result.
pub fn write_npy(path: &Path, a: &HostArray) -> Result<()> {
    let bad = |e: std::io::Error| Error::Buffer(format!("cannot write {}: {e}", path.display()));
    let tmp = path.with_extension("npy.tmp");
    {
        let file = std::fs::File::create(&tmp).map_err(bad)?;
        let mut out = std::io::BufWriter::new(file);
        let s = a.dtype.size();
        macro_rules! write {
            ($t:ty) => {{
                use npyz::WriterBuilder;
                let mut w = npyz::WriteOptions::<$t>::new()
                    .default_dtype()
                    .shape(&a.shape)
                    .writer(&mut out)
                    .begin_nd()
                    .map_err(bad)?;
                for c in a.bytes.chunks_exact(s) {
                    let mut b = [0u8; std::mem::size_of::<$t>()];
                    b.copy_from_slice(c);
                    w.push(&<$t>::from_le_bytes(b)).map_err(bad)?;
                }
                w.finish().map_err(bad)?;
            }};
        }
        match a.dtype {
            Dtype::I8 => write!(i8),
            Dtype::I16 => write!(i16),
            Dtype::I32 => write!(i32),
            Dtype::I64 => write!(i64),
            Dtype::U8 => write!(u8),
            Dtype::U16 => write!(u16),
            Dtype::U32 => write!(u32),
            Dtype::U64 => write!(u64),
            Dtype::F32 => write!(f32),
            Dtype::F64 => write!(f64),
        }
        use std::io::Write;
        out.flush().map_err(bad)?;
    }
    std::fs::rename(&tmp, path).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            ArgSpec::parse("i32=-5").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::I32,
                bits: 0xffff_fffb
            }
        );
        assert_eq!(
            ArgSpec::parse("u8=255").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::U8,
                bits: 255
            }
        );
        assert!(ArgSpec::parse("u8=256").is_err());
        assert!(ArgSpec::parse("u32=-1").is_err());
        assert_eq!(
            ArgSpec::parse("i32=0xffffffff").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::I32,
                bits: 0xffff_ffff
            }
        );
        assert_eq!(
            ArgSpec::parse("f32=1.5").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::F32,
                bits: 0x3fc0_0000
            }
        );
        assert_eq!(
            ArgSpec::parse("f32=0x7f800000").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::F32,
                bits: 0x7f80_0000
            }
        );
        assert!(matches!(
            ArgSpec::parse("f64=nan").unwrap(),
            ArgSpec::Scalar {
                dtype: Dtype::F64,
                ..
            }
        ));
        assert_eq!(
            ArgSpec::parse("zeros:f32:10").unwrap(),
            ArgSpec::Zeros {
                dtype: Dtype::F32,
                count: 10
            }
        );
        assert!(ArgSpec::parse("zeros:f16:10").is_err());
        assert!(ArgSpec::parse("bogus").is_err());
        assert_eq!(
            ArgSpec::parse("@x.npy").unwrap(),
            ArgSpec::Npy("x.npy".into())
        );
    }

    #[test]
    fn npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("warpfold-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.npy");
        let a = HostArray {
            dtype: Dtype::I16,
            shape: vec![2, 3],
            bytes: (0..12u8).collect(),
        };
        write_npy(&p, &a).unwrap();
        assert_eq!(read_npy(&p).unwrap(), a);
        std::fs::write(&p, b"not npy").unwrap();
        assert!(read_npy(&p).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
