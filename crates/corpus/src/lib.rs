//! The kernel corpus under `tests/corpus`: each case directory has CUDA
//! source, its PTX variants, inputs, expected outputs and a `case.toml`
//! (format in `tests/corpus/README.md`). This crate reads cases and judges
//! results, for the tests of the library and of the CLI.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use warpfold::host::{read_npy, Dtype, HostArray};

#[derive(Debug, Deserialize)]
pub struct CaseFile {
    pub description: Option<String>,
    pub archs: Option<Vec<String>>,
    #[serde(rename = "case")]
    pub launches: Vec<Launch>,
}

#[derive(Debug, Deserialize)]
pub struct Launch {
    pub kernel: String,
    pub grid: Vec<u32>,
    pub block: Vec<u32>,
    #[serde(default)]
    pub shared_bytes: u32,
    pub args: Vec<String>,
    #[serde(default, rename = "check")]
    pub checks: Vec<Check>,
    pub expect_error: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Check {
    pub arg: usize,
    pub expected: String,
    pub tolerance: String,
    pub fast_tolerance: Option<String>,
}

pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub file: CaseFile,
}

impl Case {
    /// The PTX variants to run: `(label, path, is_fast_math)`.
    pub fn variants(&self) -> Vec<(String, PathBuf, bool)> {
        let archs = self
            .file
            .archs
            .clone()
            .unwrap_or_else(|| vec!["70".into(), "80".into()]);
        let mut out = Vec::new();
        for a in archs {
            for fast in [false, true] {
                let f = format!("kernel.sm{a}{}.ptx", if fast { ".fast" } else { "" });
                out.push((f.clone(), self.dir.join(f), fast));
            }
        }
        out
    }
}

pub fn dims(v: &[u32]) -> [u32; 3] {
    let mut d = [1u32; 3];
    for (i, x) in v.iter().take(3).enumerate() {
        d[i] = *x;
    }
    d
}

/// The repository's `tests/corpus` directory.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// All cases, sorted by name; `WARPFOLD_CORPUS_FILTER` keeps names containing it.
pub fn cases() -> Vec<Case> {
    let filter = std::env::var("WARPFOLD_CORPUS_FILTER").ok();
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let toml_path = dir.join("case.toml");
        if !toml_path.exists() {
            continue;
        }
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if let Some(f) = &filter {
            if !name.contains(f.as_str()) {
                continue;
            }
        }
        let text = std::fs::read_to_string(&toml_path).expect("readable case.toml");
        let file: CaseFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", toml_path.display()));
        out.push(Case { name, dir, file });
    }
    out
}

#[derive(Debug, Clone, Copy)]
pub enum Tolerance {
    Exact,
    Ulps(u64),
    Rel(f64),
    Abs(f64),
}

pub fn parse_tolerance(s: &str) -> Result<Tolerance, String> {
    if s == "exact" {
        return Ok(Tolerance::Exact);
    }
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("bad tolerance `{s}`"))?;
    match k {
        "ulps" => v
            .parse()
            .map(Tolerance::Ulps)
            .map_err(|_| format!("bad tolerance `{s}`")),
        "rel" => v
            .parse()
            .map(Tolerance::Rel)
            .map_err(|_| format!("bad tolerance `{s}`")),
        "abs" => v
            .parse()
            .map(Tolerance::Abs)
            .map_err(|_| format!("bad tolerance `{s}`")),
        _ => Err(format!("bad tolerance `{s}`")),
    }
}

fn elem(a: &HostArray, i: usize) -> u64 {
    let s = a.dtype.size();
    let mut w = [0u8; 8];
    w[..s].copy_from_slice(&a.bytes[i * s..(i + 1) * s]);
    u64::from_le_bytes(w)
}

fn as_f64(d: Dtype, bits: u64) -> f64 {
    match d {
        Dtype::F32 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// Position of a float on the number line in ulps (monotonic integer map).
fn ordered(d: Dtype, bits: u64) -> i128 {
    let (sign, mag) = match d {
        Dtype::F32 => (bits >> 31 & 1 == 1, i128::from(bits as u32 & 0x7fff_ffff)),
        _ => (bits >> 63 == 1, i128::from(bits & 0x7fff_ffff_ffff_ffff)),
    };
    if sign {
        -mag
    } else {
        mag
    }
}

/// Compare `got` with `want`; on mismatch, a message naming the first bad
/// elements.
pub fn compare(got: &HostArray, want: &HostArray, tol: Tolerance) -> Result<(), String> {
    if got.dtype != want.dtype || got.bytes.len() != want.bytes.len() {
        return Err(format!(
            "shape/dtype differ: got {}x{}, expected {}x{}",
            got.dtype.name(),
            got.len(),
            want.dtype.name(),
            want.len()
        ));
    }
    let mut bad = Vec::new();
    let mut nbad = 0usize;
    for i in 0..want.len() {
        let (g, w) = (elem(got, i), elem(want, i));
        let ok = if g == w {
            true
        } else if !want.dtype.is_float() {
            false
        } else {
            let (x, y) = (as_f64(want.dtype, g), as_f64(want.dtype, w));
            if x.is_nan() && y.is_nan() {
                true
            } else {
                match tol {
                    Tolerance::Exact => false,
                    Tolerance::Ulps(n) => {
                        !x.is_nan()
                            && !y.is_nan()
                            && (ordered(want.dtype, g) - ordered(want.dtype, w)).unsigned_abs()
                                <= u128::from(n)
                    }
                    Tolerance::Rel(r) => (x - y).abs() <= r * y.abs().max(1e-30),
                    Tolerance::Abs(a) => (x - y).abs() <= a,
                }
            }
        };
        if !ok {
            nbad += 1;
            if bad.len() < 5 {
                bad.push(format!(
                    "[{i}] got {} expected {}",
                    want.dtype.format(&got.bytes, i),
                    want.dtype.format(&want.bytes, i)
                ));
            }
        }
    }
    if nbad == 0 {
        Ok(())
    } else {
        Err(format!(
            "{nbad} of {} elements differ: {}",
            want.len(),
            bad.join("; ")
        ))
    }
}

/// The expected array and tolerance of a check.
pub fn expectation(
    case: &Case,
    check: &Check,
    fast: bool,
) -> Result<(HostArray, Tolerance), String> {
    let want = read_npy(&case.dir.join(&check.expected)).map_err(|e| e.to_string())?;
    let t = if fast {
        check.fast_tolerance.as_deref().unwrap_or(&check.tolerance)
    } else {
        &check.tolerance
    };
    Ok((want, parse_tolerance(t)?))
}
