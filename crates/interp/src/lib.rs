//! The reference interpreter: the definition of what every warpfold IR
//! instruction means, with every memory access checked.
//!
//! A launch runs CTAs on a pool of OS threads (each CTA on one worker, CTAs
//! handed out in increasing index so earlier CTAs always started first, as on
//! a GPU). Inside a CTA, each warp runs its lanes in lock-step groups: the
//! lanes whose program counter is earliest in source order run together, one
//! instruction at a time, so divergent lanes reconverge where the code joins
//! and warp-synchronous code sees every lane's effects per instruction.
//! Warp collectives (`shfl.sync`, `vote.sync`, ...) wait for the lanes their
//! mask names; barriers wait for the CTA. A CTA that cannot make progress is
//! reported as a deadlock, never left hanging.

pub mod alu;
mod cta;
mod error;
mod instance;
pub mod memory;
pub mod printf;

pub use error::{bad_function_pointer, ExecError, Fault, FaultKind};
pub use instance::Instance;
pub use memory::{Allocation, DeviceMemory, MemoryError};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use warpfold_ir::FuncId;

/// Grid, block and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// Stop a launch that runs longer than this.
    pub timeout: Option<Duration>,
    /// Where device `printf` output goes: this buffer, or stdout when `None`.
    pub printf: Option<std::sync::Arc<Mutex<String>>>,
    /// Compiled backends: whether whole-warp stores of consecutive words
    /// to global memory bypass the caches (non-temporal stores). `None`:
    /// when the launch has at least as many threads as 32-bit words fit in
    /// half the last-level cache (a word written and one read per thread
    /// fill it), i.e. when its output is unlikely to be read back from the
    /// cache anyway. The interpreter ignores it.
    pub streaming_stores: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct LaunchStats {
    /// Instructions executed, summed over threads (per lock-step group step,
    /// times the lanes in it).
    pub thread_instructions: u64,
}

/// Most shared memory one CTA may use (static + dynamic), as on sm_90.
pub const MAX_SHARED: u64 = 227 * 1024;
pub const WARP: usize = 32;

/// Check a launch against the hardware limits and the kernel's own
/// (`.reqntid`, `.maxntid`, parameter size), for every backend.
/// The number of cores to use by default, asked of the OS once (the
/// question reads cgroup files: tens of microseconds per launch).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

pub fn validate_launch(
    func: &warpfold_ir::Function,
    cfg: &LaunchConfig,
    params_len: usize,
) -> Result<(), ExecError> {
    let name = &func.name;
    let bad = |m: String| Err(ExecError::BadLaunch(format!("kernel `{name}`: {m}")));
    let threads_per_cta = cfg.block.iter().map(|&d| u64::from(d)).product::<u64>();
    if cfg.grid.contains(&0) || cfg.block.contains(&0) {
        return bad(format!(
            "grid {:?} and block {:?} must be at least 1 in every dimension",
            cfg.grid, cfg.block
        ));
    }
    if threads_per_cta > 1024 || cfg.block[2] > 64 {
        return bad(format!(
            "block {:?} has {threads_per_cta} threads; at most 1024 (and z at most 64)",
            cfg.block
        ));
    }
    if cfg.grid[0] > i32::MAX as u32 || cfg.grid[1] > 65535 || cfg.grid[2] > 65535 {
        return bad(format!(
            "grid {:?} exceeds the limits (2^31-1, 65535, 65535)",
            cfg.grid
        ));
    }
    if let Some(req) = func.reqntid {
        if req != cfg.block {
            return bad(format!(
                "the kernel requires block {:?} (.reqntid), launched with {:?}",
                req, cfg.block
            ));
        }
    }
    if let Some(max) = func.maxntid {
        let limit: u64 = max.iter().map(|&d| u64::from(d)).product();
        if threads_per_cta > limit {
            return bad(format!("the kernel allows at most {limit} threads per block (.maxntid), launched with {threads_per_cta}"));
        }
    }
    if params_len as u64 != func.param_bytes {
        return bad(format!(
            "parameter buffer is {} bytes, the kernel takes {}",
            params_len, func.param_bytes
        ));
    }
    Ok(())
}

/// Run `kernel` of `inst` over the grid. `params` is the kernel's parameter
/// buffer, laid out as the kernel's `Param::offset`s say.
pub fn launch(
    inst: &Instance,
    mem: &DeviceMemory,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u8],
    opts: &ExecOptions,
) -> Result<LaunchStats, ExecError> {
    let module = inst.module();
    let Some(func) = module.functions.get(kernel).filter(|f| f.is_kernel) else {
        return Err(ExecError::BadLaunch("no such kernel".into()));
    };
    let name = func.name.clone();
    validate_launch(func, cfg, params.len())?;
    let bad = |m: String| Err(ExecError::BadLaunch(format!("kernel `{name}`: {m}")));
    let Some(layout) = inst.shared_layout(kernel) else {
        return bad("no shared-memory layout (not a kernel of this module)".into());
    };
    let dyn_base = layout.dynamic_base();
    let shared_total = dyn_base + u64::from(cfg.dynamic_shared);
    if shared_total > MAX_SHARED {
        return bad(format!(
            "needs {shared_total} bytes of shared memory; the limit is {MAX_SHARED}"
        ));
    }

    let total_ctas = u64::from(cfg.grid[0]) * u64::from(cfg.grid[1]) * u64::from(cfg.grid[2]);
    let workers = match opts.threads {
        0 => cores(),
        n => n,
    }
    .min(total_ctas.max(1) as usize)
    .max(1);
    let ctx = cta::LaunchCtx {
        module,
        inst,
        map: mem.snapshot(),
        kernel,
        name: name.clone(),
        cfg: *cfg,
        params,
        dyn_base,
        shared_total,
        shared_offsets: &layout.offsets,
        start: Instant::now(),
        deadline: opts.timeout.map(|t| Instant::now() + t),
        cancel: AtomicBool::new(false),
        nsm: workers as u32,
        printf: opts.printf.clone(),
    };
    let next = AtomicU64::new(0);
    let first_error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let executed = AtomicU64::new(0);
    std::thread::scope(|s| {
        for w in 0..workers {
            let (ctx, next, first_error, executed) = (&ctx, &next, &first_error, &executed);
            s.spawn(move || loop {
                if ctx.cancel.load(Ordering::Relaxed) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total_ctas {
                    return;
                }
                let g = ctx.cfg.grid;
                let ctaid = [
                    (i % u64::from(g[0])) as u32,
                    ((i / u64::from(g[0])) % u64::from(g[1])) as u32,
                    (i / (u64::from(g[0]) * u64::from(g[1]))) as u32,
                ];
                match cta::run_cta(ctx, ctaid, w as u32) {
                    Ok(n) => {
                        executed.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        ctx.cancel.store(true, Ordering::Relaxed);
                        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                        // Report the error of the lowest CTA, so the message
                        // does not depend on thread timing when several fail.
                        let replace = match &*slot {
                            None => true,
                            Some((j, prev)) => {
                                matches!(prev, ExecError::Cancelled)
                                    || (i < *j && !matches!(e, ExecError::Cancelled))
                            }
                        };
                        if replace {
                            *slot = Some((i, e));
                        }
                        return;
                    }
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(LaunchStats {
            thread_instructions: executed.load(Ordering::Relaxed),
        }),
    }
}
