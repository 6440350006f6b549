//! CUDA C++ to PTX through NVRTC, loaded at run time so that PTX users never
//! need it. The library is `$WARPFOLD_NVRTC` if set, else the one the pip
//! package `nvidia-cuda-nvrtc-cu12` installs, else `libnvrtc.so.12` from the
//! system's library path.

use crate::{Error, Result};
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;

/// Compile options.
#[derive(Debug, Clone)]
pub struct Options {
    /// `compute_XY` virtual architecture (default 80).
    pub arch: u32,
    pub fast_math: bool,
    /// Extra NVRTC options, passed as given.
    pub extra: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            arch: 80,
            fast_math: false,
            extra: Vec::new(),
        }
    }
}

const INSTALL_HINT: &str = "install it with `pip install nvidia-cuda-nvrtc-cu12`, or set WARPFOLD_NVRTC to the path of libnvrtc.so.12 (PTX input never needs NVRTC)";

/// Places to look for the library, most specific first.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("WARPFOLD_NVRTC") {
        out.push(PathBuf::from(p));
        return out;
    }
    for dir in python_paths() {
        out.push(dir.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        out.push(dir.join("nvidia/cu13/lib/libnvrtc.so.13"));
    }
    out.push(PathBuf::from("libnvrtc.so.12"));
    out.push(PathBuf::from("libnvrtc.so"));
    out
}

/// The site-packages directories of the `python3` on PATH.
fn python_paths() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for py in ["python3", "python"] {
        let mut cmd = std::process::Command::new(py);
        warpfold_cpu::unbind_child(&mut cmd);
        let out = cmd
            .args([
                "-c",
                "import sys; print('\\n'.join(p for p in sys.path if p))",
            ])
            .stderr(std::process::Stdio::null())
            .output();
        if let Ok(o) = out {
            if o.status.success() {
                for line in String::from_utf8_lossy(&o.stdout).lines() {
                    dirs.push(PathBuf::from(line.trim()));
                }
                break;
            }
        }
    }
    dirs
}

type CreateFn = unsafe extern "C" fn(
    *mut *mut std::ffi::c_void,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileFn = unsafe extern "C" fn(*mut std::ffi::c_void, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(*mut std::ffi::c_void, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(*mut std::ffi::c_void, *mut c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut *mut std::ffi::c_void) -> c_int;

fn open() -> Result<(Library, PathBuf)> {
    let mut tried = Vec::new();
    for c in candidates() {
        if c.is_absolute() && !c.exists() {
            continue;
        }
        // SAFETY: loading NVRTC runs its initialisers, which have no
        // preconditions; we only call its documented C API afterwards.
        match unsafe { Library::new(&c) } {
            Ok(lib) => return Ok((lib, c)),
            Err(e) => tried.push(format!("{}: {e}", c.display())),
        }
    }
    Err(Error::Nvrtc(format!(
        "NVRTC (the CUDA runtime compiler) was not found, so .cu files cannot be compiled; {INSTALL_HINT}{}",
        if tried.is_empty() { String::new() } else { format!(" (tried: {})", tried.join("; ")) }
    )))
}

/// Compile `src` to PTX.
pub fn compile(src: &str, file: &str, opts: &Options) -> Result<String> {
    let (lib, path) = open()?;
    let nv = |e: String| Error::Nvrtc(format!("{e} (NVRTC at {})", path.display()));
    let csrc = CString::new(src).map_err(|_| nv("source contains a NUL byte".into()))?;
    let cname = CString::new(file.replace('\0', "")).map_err(|_| nv("bad file name".into()))?;
    let mut options = vec![
        format!("--gpu-architecture=compute_{}", opts.arch),
        "--std=c++17".to_string(),
    ];
    if opts.fast_math {
        options.push("--use_fast_math".into());
    }
    options.extend(opts.extra.iter().cloned());
    let coptions: Vec<CString> = options
        .iter()
        .filter_map(|o| CString::new(o.as_str()).ok())
        .collect();
    let ptrs: Vec<*const c_char> = coptions.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: the symbols have the signatures of NVRTC's C API (nvrtc.h);
    // every pointer passed lives until the call returns, and the program
    // handle is destroyed on every path after creation.
    unsafe {
        let sym = |name: &[u8]| -> Result<*const ()> {
            let s: Symbol<*const ()> = lib
                .get(name)
                .map_err(|e| nv(format!("symbol missing: {e}")))?;
            Ok(*s)
        };
        let create: CreateFn = std::mem::transmute(sym(b"nvrtcCreateProgram\0")?);
        let compile: CompileFn = std::mem::transmute(sym(b"nvrtcCompileProgram\0")?);
        let log_size: SizeFn = std::mem::transmute(sym(b"nvrtcGetProgramLogSize\0")?);
        let get_log: GetFn = std::mem::transmute(sym(b"nvrtcGetProgramLog\0")?);
        let ptx_size: SizeFn = std::mem::transmute(sym(b"nvrtcGetPTXSize\0")?);
        let get_ptx: GetFn = std::mem::transmute(sym(b"nvrtcGetPTX\0")?);
        let destroy: DestroyFn = std::mem::transmute(sym(b"nvrtcDestroyProgram\0")?);
        let mut prog: *mut std::ffi::c_void = std::ptr::null_mut();
        let rc = create(
            &mut prog,
            csrc.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        );
        if rc != 0 || prog.is_null() {
            return Err(nv(format!("nvrtcCreateProgram failed with code {rc}")));
        }
        let rc = compile(prog, ptrs.len() as c_int, ptrs.as_ptr());
        let mut n = 0usize;
        let mut log = String::new();
        if log_size(prog, &mut n) == 0 && n > 1 {
            let mut buf = vec![0 as c_char; n];
            if get_log(prog, buf.as_mut_ptr()) == 0 {
                log = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            }
        }
        if rc != 0 {
            destroy(&mut prog);
            return Err(Error::Nvrtc(format!(
                "CUDA compilation of {file} failed:\n{}",
                log.trim_end()
            )));
        }
        let mut n = 0usize;
        let ok = ptx_size(prog, &mut n) == 0 && n > 0;
        let mut buf = vec![0 as c_char; n.max(1)];
        let ok = ok && get_ptx(prog, buf.as_mut_ptr()) == 0;
        destroy(&mut prog);
        if !ok {
            return Err(nv("could not read the PTX".into()));
        }
        Ok(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
    }
}
