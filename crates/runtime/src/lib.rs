//! warpfold: run PTX and CUDA kernels on CPUs.
//!
//! ```no_run
//! use warpfold::{Arg, Device};
//! let dev = Device::new();
//! let module = dev.load_ptx(&std::fs::read_to_string("saxpy.ptx").unwrap()).unwrap();
//! let kernel = module.kernel("saxpy").unwrap();
//! let x = dev.buffer_from(&[1.0f32, 2.0, 3.0]).unwrap();
//! let y = dev.buffer_from(&[10.0f32, 20.0, 30.0]).unwrap();
//! kernel.launch([1, 1, 1], [32, 1, 1], 0, &[Arg::F32(2.0), Arg::Buffer(&x), Arg::Buffer(&y), Arg::I32(3)]).unwrap();
//! let out: Vec<f32> = y.to_vec().unwrap();
//! ```
//!
//! A [`Device`] owns device memory and runs launches; [`Module`]s are loaded
//! from PTX text (or CUDA source through NVRTC), [`Kernel`]s are found by name
//! and launched with typed [`Arg`]s that are checked against the kernel's
//! parameters before anything runs.

mod args;
pub mod host;
pub mod nvrtc;

pub use args::Arg;
pub use warpfold_cpu::{bind_threads, code_target, unbind_child, CacheUse};
pub use warpfold_interp::{cores, ExecError, ExecOptions, LaunchStats};
pub use warpfold_ir as ir;
pub use warpfold_ptx::{Diagnostic, Diagnostics};

use std::sync::Arc;
use std::time::Duration;
use warpfold_interp::{Allocation, DeviceMemory, Instance, LaunchConfig, MemoryError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The PTX did not parse or lower; `rendered` has line:column and a caret.
    #[error("{rendered}")]
    Ptx {
        rendered: String,
        diagnostics: Diagnostics,
    },
    #[error("no kernel named `{name}` in the module; it has: {available}")]
    NoSuchKernel { name: String, available: String },
    #[error("kernel name `{name}` is ambiguous; use one of: {candidates}")]
    AmbiguousKernel { name: String, candidates: String },
    #[error("arguments do not match kernel {signature}: {message}")]
    Arguments { signature: String, message: String },
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("device memory: {0}")]
    Memory(#[from] MemoryError),
    #[error("{0}")]
    Nvrtc(String),
    #[error("buffer: {0}")]
    Buffer(String),
    #[error("backend `{0}` is not available: {1}")]
    Backend(String, String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which engine runs launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Compiled to native SIMD code through LLVM (the default). Kernels it
    /// cannot compile yet run on the interpreter, with a warning.
    Cpu,
    /// The reference interpreter: checks every access; the semantics oracle.
    Interp,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Interp => "interp",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(Backend::Cpu),
            "interp" => Ok(Backend::Interp),
            other => Err(Error::Backend(
                other.into(),
                "known backends: cpu, interp".into(),
            )),
        }
    }
}

/// Whether products and sums fuse by default (see `Device::with_fmad`):
/// yes unless `WARPFOLD_FMAD` is `off` or `false`.
pub fn fmad_from_env() -> bool {
    std::env::var("WARPFOLD_FMAD").map_or(true, |v| v != "off" && v != "false")
}

/// A CPU device: memory plus the options launches run with.
#[derive(Clone)]
pub struct Device {
    mem: Arc<DeviceMemory>,
    opts: ExecOptions,
    backend: Backend,
    disk_cache: Option<std::path::PathBuf>,
    warp_width: Option<u32>,
    fmad: bool,
}

impl Default for Device {
    fn default() -> Self {
        Self::new()
    }
}

impl Device {
    pub fn new() -> Self {
        Device {
            mem: Arc::new(DeviceMemory::new()),
            opts: ExecOptions::default(),
            backend: Backend::Cpu,
            disk_cache: warpfold_cpu::default_disk_cache(),
            warp_width: None,
            fmad: fmad_from_env(),
        }
    }

    /// Whether loading PTX fuses a `mul` and the `add` or `sub` that reads
    /// it into one `fma` where neither has a rounding modifier, as ptxas
    /// does by default and the PTX ISA allows (`true`, the default unless
    /// `WARPFOLD_FMAD=off`); `false` rounds each on its own, as ptxas
    /// `--fmad=false` (CUDA source is then compiled with `--fmad=false`
    /// too).
    pub fn with_fmad(mut self, on: bool) -> Self {
        self.fmad = on;
        self
    }

    /// Folder where compiled machine code is kept between processes
    /// (`None`: compile every time). The default is `$WARPFOLD_CACHE_DIR`
    /// (`off` disables it), else `$XDG_CACHE_HOME/warpfold/kernels`, else
    /// `~/.cache/warpfold/kernels`.
    pub fn with_disk_cache(mut self, dir: Option<std::path::PathBuf>) -> Self {
        if let Some(d) = &dir {
            if std::fs::create_dir_all(d).is_err() {
                self.disk_cache = None;
                return self;
            }
        }
        self.disk_cache = dir;
        self
    }

    /// Worker threads for launches (0 = one per core).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.opts.threads = n;
        self
    }

    /// Stop launches that run longer than this.
    pub fn with_timeout(mut self, t: Option<Duration>) -> Self {
        self.opts.timeout = t;
        self
    }

    /// Collect device `printf` output in `buf` instead of writing it to stdout.
    pub fn with_printf_buffer(mut self, buf: std::sync::Arc<std::sync::Mutex<String>>) -> Self {
        self.opts.printf = Some(buf);
        self
    }

    /// Whether the compiled backend's whole-warp global stores bypass the
    /// caches (`Some(true)`), never do (`Some(false)`), or do when a launch
    /// has as many threads as 32-bit words fit in half the last-level cache
    /// (`None`, the default; see `ExecOptions::streaming_stores`).
    pub fn with_streaming_stores(mut self, on: Option<bool>) -> Self {
        self.opts.streaming_stores = on;
        self
    }

    /// Lanes per warp in compiled code: `Some(8 | 16 | 32)` asks for that
    /// width wherever a kernel allows it (kernels that observe their warp,
    /// through shuffles, votes, lane ids, volatile memory, ordered atomics
    /// or printf, keep the GPU's 32; see `Kernel::compiled`'s
    /// `warp_lanes`). `None` (the default): `WARPFOLD_WARP_WIDTH`, else a
    /// choice per kernel and CPU (narrower warps for register-hungry loops
    /// on CPUs without AVX-512).
    pub fn with_warp_width(mut self, lanes: Option<u32>) -> Self {
        self.warp_width = lanes;
        self
    }

    /// Run launches on `backend`.
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Load a PTX module; errors carry line:column diagnostics.
    pub fn load_ptx(&self, src: &str) -> Result<Module> {
        self.load_ptx_named(src, "<ptx>")
    }

    /// As `load_ptx`, naming the file in rendered diagnostics.
    pub fn load_ptx_named(&self, src: &str, file: &str) -> Result<Module> {
        let ir = warpfold_ptx::load_with(src, self.fmad).map_err(|d| Error::Ptx {
            rendered: d.render(file, src),
            diagnostics: d,
        })?;
        let ir = Arc::new(ir);
        let instance = Arc::new(Instance::new(ir.clone(), &self.mem)?);
        Ok(Module {
            ir,
            instance,
            device: self.clone(),
            compiled: Arc::new(
                warpfold_cpu::Cache::new(self.disk_cache.clone()).with_warp_width(self.warp_width),
            ),
        })
    }

    /// Compile CUDA C++ with NVRTC (found at run time) and load the PTX.
    pub fn load_cuda(
        &self,
        src: &str,
        file: &str,
        options: &nvrtc::Options,
    ) -> Result<(Module, String)> {
        let ptx = if self.fmad {
            nvrtc::compile(src, file, options)?
        } else {
            let mut options = options.clone();
            options.extra.push("--fmad=false".into());
            nvrtc::compile(src, file, &options)?
        };
        let m = self.load_ptx_named(&ptx, &format!("{file} (as PTX)"))?;
        Ok((m, ptx))
    }

    /// A zero-filled buffer of `bytes` bytes.
    pub fn buffer_zeroed(&self, bytes: usize) -> Result<Buffer> {
        let alloc = self.mem.alloc(bytes as u64)?;
        Ok(Buffer {
            alloc,
            mem: self.mem.clone(),
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn buffer_from<T: bytemuck::Pod>(&self, data: &[T]) -> Result<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let b = self.buffer_zeroed(bytes.len())?;
        b.alloc.write_bytes(bytes);
        Ok(b)
    }
}

/// Device memory. Freed when dropped.
pub struct Buffer {
    alloc: Arc<Allocation>,
    mem: Arc<DeviceMemory>,
}

impl Buffer {
    pub fn len_bytes(&self) -> usize {
        self.alloc.size as usize
    }

    /// The device address kernels see.
    pub fn device_ptr(&self) -> u64 {
        self.alloc.base
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len_bytes()];
        self.alloc.read_bytes(&mut out);
        out
    }

    /// Copy out as `T`s (the size must be a multiple of `T`'s).
    pub fn to_vec<T: bytemuck::Pod>(&self) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if size == 0 || !self.len_bytes().is_multiple_of(size) {
            return Err(Error::Buffer(format!(
                "{} bytes is not a whole number of {}-byte elements",
                self.len_bytes(),
                size
            )));
        }
        let bytes = self.to_bytes();
        let mut out = vec![T::zeroed(); self.len_bytes() / size];
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(&bytes);
        Ok(out)
    }

    pub fn write<T: bytemuck::Pod>(&self, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.len() != self.len_bytes() {
            return Err(Error::Buffer(format!(
                "writing {} bytes into a {}-byte buffer",
                bytes.len(),
                self.len_bytes()
            )));
        }
        self.alloc.write_bytes(bytes);
        Ok(())
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let _ = self.mem.free(self.alloc.base);
    }
}

/// A loaded module.
#[derive(Clone)]
pub struct Module {
    ir: Arc<ir::Module>,
    instance: Arc<Instance>,
    device: Device,
    compiled: Arc<warpfold_cpu::Cache>,
}

/// What `inspect` shows of a kernel.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    pub name: String,
    pub signature: String,
    pub params: Vec<ir::Param>,
}

impl Module {
    pub fn ir(&self) -> &ir::Module {
        &self.ir
    }

    pub fn kernels(&self) -> Vec<KernelInfo> {
        self.ir
            .kernels()
            .map(|(_, f)| KernelInfo {
                name: f.name.clone(),
                signature: f.signature(),
                params: f.params.clone(),
            })
            .collect()
    }

    /// Find a kernel by its PTX name, or for a C++ kernel by its demangled
    /// name: `axpy<float>`, the full signature, or the plain `axpy` when only
    /// one kernel has it.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        if let Some((id, _)) = self.ir.kernel(name) {
            return Ok(Kernel {
                module: self.clone(),
                id,
            });
        }
        let wanted = name.replace(' ', "");
        let matches: Vec<_> = self
            .ir
            .kernels()
            .filter(|(_, f)| match demangle(&f.name) {
                Some(d) => [d.full, d.qualified, d.base]
                    .iter()
                    .any(|n| n.replace(' ', "") == wanted),
                None => false,
            })
            .collect();
        match matches[..] {
            [(id, _)] => Ok(Kernel {
                module: self.clone(),
                id,
            }),
            [] => {
                let available = self
                    .ir
                    .kernels()
                    .map(|(_, f)| display_name(&f.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(Error::NoSuchKernel {
                    name: name.into(),
                    available: if available.is_empty() {
                        "no kernels".into()
                    } else {
                        available
                    },
                })
            }
            _ => Err(Error::AmbiguousKernel {
                name: name.into(),
                candidates: matches
                    .iter()
                    .map(|(_, f)| display_name(&f.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

/// Names of a C++ kernel: `void axpy<float>(unsigned long, float)`,
/// `axpy<float>` and `axpy`.
pub struct Demangled {
    pub full: String,
    pub qualified: String,
    pub base: String,
}

/// Demangle an Itanium C++ name; `None` for plain (extern "C") names.
pub fn demangle(name: &str) -> Option<Demangled> {
    if !name.starts_with("_Z") {
        return None;
    }
    let full = cpp_demangle::Symbol::new(name).ok()?.to_string();
    // The name is what precedes the top-level parameter list, after any
    // return type (templates print one).
    let mut depth = 0i32;
    let mut paren = None;
    let mut last_space = None;
    for (i, c) in full.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                paren = Some(i);
                break;
            }
            ' ' if depth == 0 => last_space = Some(i),
            _ => {}
        }
    }
    let head = &full[..paren.unwrap_or(full.len())];
    let qualified = match last_space {
        Some(s) => head[s + 1..].to_string(),
        None => head.to_string(),
    };
    let base = qualified
        .split('<')
        .next()
        .unwrap_or(&qualified)
        .to_string();
    Some(Demangled {
        full,
        qualified,
        base,
    })
}

/// `name`, or `name (C++ signature)` for a mangled one.
pub fn display_name(name: &str) -> String {
    match demangle(name) {
        Some(d) => format!("{name} ({})", d.full),
        None => name.to_string(),
    }
}

/// A kernel of a loaded module, ready to launch.
#[derive(Clone)]
pub struct Kernel {
    module: Module,
    id: ir::FuncId,
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.func().name
    }

    pub fn func(&self) -> &ir::Function {
        &self.module.ir.functions[self.id]
    }

    pub fn signature(&self) -> String {
        self.func().signature()
    }

    /// Check `args` against the parameters and build the parameter buffer.
    pub fn pack_args(&self, args: &[Arg]) -> Result<Vec<u8>> {
        args::pack(self.func(), args)
    }

    /// Launch over `grid` x `block` threads with `shared` bytes of dynamic
    /// shared memory; returns when every thread has finished.
    pub fn launch(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        args: &[Arg],
    ) -> Result<LaunchStats> {
        let params = self.pack_args(args)?;
        self.launch_packed(grid, block, shared, &params)
    }

    pub fn launch_packed(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &[u8],
    ) -> Result<LaunchStats> {
        self.launch_packed_on(self.module.device.backend, grid, block, shared, params)
    }

    /// Launch on a given backend (buffers are shared by both).
    pub fn launch_packed_on(
        &self,
        backend: Backend,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &[u8],
    ) -> Result<LaunchStats> {
        let cfg = LaunchConfig {
            grid,
            block,
            dynamic_shared: shared,
        };
        let dev = &self.module.device;
        if backend == Backend::Cpu {
            if let Ok(k) = &*self.compiled_for(block, grid) {
                return Ok(warpfold_cpu::launch(
                    k,
                    &self.module.instance,
                    &dev.mem,
                    &cfg,
                    params,
                    &dev.opts,
                )?);
            }
        }
        Ok(warpfold_interp::launch(
            &self.module.instance,
            &dev.mem,
            self.id,
            &cfg,
            params,
            &dev.opts,
        )?)
    }

    /// The compiled form of this kernel (compiled on first use and cached),
    /// or why the cpu backend cannot compile it; then launches fall back to
    /// the interpreter. Code is specialised for one block shape: `block`
    /// (and for grids of under 2^31 threads per dimension, as nearly all
    /// are; see [`Kernel::compiled_for`]).
    pub fn compiled(
        &self,
        block: [u32; 3],
    ) -> Arc<std::result::Result<warpfold_cpu::CompiledKernel, warpfold_cpu::Unsupported>> {
        self.compiled_for(block, [1, 1, 1])
    }

    /// As [`Kernel::compiled`], for launches of `grid` blocks: code that
    /// knows a thread's linear index fits in an `int` where the grid is
    /// small enough (see `warpfold_cpu::grid_fits`), else code for any grid.
    pub fn compiled_for(
        &self,
        block: [u32; 3],
        grid: [u32; 3],
    ) -> Arc<std::result::Result<warpfold_cpu::CompiledKernel, warpfold_cpu::Unsupported>> {
        let fits = warpfold_cpu::grid_fits(block, grid);
        self.module
            .compiled
            .get_or_compile(&self.module.ir, self.id, block, fits)
    }

    /// Lanes per warp of the compiled code that launches of `grid` blocks
    /// of `block` run (`None` when they run on the interpreter; see
    /// [`Device::with_warp_width`]).
    pub fn warp_lanes_for(&self, block: [u32; 3], grid: [u32; 3]) -> Option<u32> {
        match self.module.device.backend {
            Backend::Interp => None,
            Backend::Cpu => self
                .compiled_for(block, grid)
                .as_ref()
                .as_ref()
                .ok()
                .map(|k| k.warp_lanes()),
        }
    }

    /// The backend launches of this kernel with blocks of `block` use, and
    /// why when it is not the device's.
    pub fn effective_backend(&self, block: [u32; 3]) -> (Backend, Option<String>) {
        self.effective_backend_for(block, [1, 1, 1])
    }

    /// As [`Kernel::effective_backend`], for launches of `grid` blocks
    /// (compiling the code those launches run, see [`Kernel::compiled_for`]).
    pub fn effective_backend_for(
        &self,
        block: [u32; 3],
        grid: [u32; 3],
    ) -> (Backend, Option<String>) {
        match self.module.device.backend {
            Backend::Interp => (Backend::Interp, None),
            Backend::Cpu => match &*self.compiled_for(block, grid) {
                Ok(_) => (Backend::Cpu, None),
                Err(e) => (Backend::Interp, Some(e.to_string())),
            },
        }
    }
}
