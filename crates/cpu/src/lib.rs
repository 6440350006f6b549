//! The compiled CPU backend. A kernel is compiled once per block shape
//! (LLVM JIT for this CPU) into a function that runs one warp as 32-lane SIMD vectors (8 or 16
//! lanes where the kernel cannot tell, see `width`); CTAs run
//! on a pool of OS threads, each CTA on one worker with its warps taking
//! turns between barriers.
//!
//! Semantics are the interpreter's: the same lane scheduling (earliest
//! block first), the same warp-collective and barrier rules, and the same
//! ALU (operations without an inline vector form call the interpreter's
//! ALU per lane). Memory is not checked here: the interpreter is the
//! checking mode.

mod cta_order;
mod deferred_red;
mod demanded;
mod disk_cache;
mod dom;
mod emit;
mod grid_stride;
mod helpers;
mod if_convert;
mod indexed;
mod interleave;
mod jit;
mod lanes;
mod lockstep;
mod lower;
mod merge;
mod own_slots;
mod pack;
mod past_jump;
mod pointer_steps;
mod pool;
mod prepare;
mod region;
mod shared_init;
mod shared_regs;
mod uniform;
mod warp_pairs;
mod width;

pub use jit::CacheUse;
pub use lanes::Shape;
pub use pool::{bind_threads, unbind_child};
pub use prepare::Unsupported;

use emit::{env, state};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use warpfold_interp::{
    validate_launch, DeviceMemory, ExecError, ExecOptions, Instance, LaunchConfig, LaunchStats,
    MAX_SHARED,
};
use warpfold_ir::shared::{shared_layout, SharedLayout};
use warpfold_ir::{FuncId, InstKind, Module};

#[repr(align(128))]
struct CacheLine<T>(T);

/// Bytes of slack the driver keeps before and after a worker's shared
/// memory: a warp's whole vector (32 lanes of 8 bytes) around any element.
/// The generated code reads (and writes back unchanged) the lanes a masked
/// shared access leaves off (see `lower::store_contig`).
pub(crate) const SHARED_SLACK: usize = 256;

/// Bytes a worker owns on either side of each buffer it writes (warp
/// states, local and shared memory, the barrier table): no other
/// allocation, another worker's in particular, shares their cache lines or
/// the line pairs the adjacent-line prefetcher fetches together. Where two
/// workers' buffers happened to meet in one line, a STREAM triad ran 1.6x
/// slower on two cores than on one.
const OWN_PAD: usize = 256;
const _: () = assert!(SHARED_SLACK <= OWN_PAD);

/// A zeroed buffer of `len` elements for one worker, and the index where
/// they start: 128-byte aligned, with `OWN_PAD` bytes of the buffer on
/// either side.
fn own_buffer<T: Copy + Default>(len: usize) -> (Vec<T>, usize) {
    let size = std::mem::size_of::<T>();
    let pad = OWN_PAD.div_ceil(size);
    let buf = vec![T::default(); len + 2 * pad + 128 / size];
    let skip = buf.as_ptr().wrapping_add(pad).align_offset(128);
    (buf, pad + skip)
}

/// Largest generated warp function compiled (keeps JIT time to about a second).
const MAX_IR_LINES: usize = 60000;

/// Kernels whose LLVM IR is longer stay on the interpreter
/// (`WARPFOLD_MAX_IR_LINES`, default `MAX_IR_LINES`).
pub(crate) fn ir_line_limit() -> usize {
    std::env::var("WARPFOLD_MAX_IR_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_IR_LINES)
}

/// A kernel compiled for this CPU.
pub struct CompiledKernel {
    func: jit::CtaFn,
    state_bytes: usize,
    frame_size: u64,
    layout: SharedLayout,
    name: String,
    kernel: FuncId,
    /// The block shape the code is specialised for (`%ntid` constants,
    /// which `%tid` components are uniform or affine in a warp).
    shape: Shape,
    /// Compiled for launches that `grid_fits` only.
    grid_fits: bool,
    /// Real CTAs per warp (1: not packed; see `pack`).
    pack: u32,
    /// Real CTAs per wide CTA along x (1: not merged; see `merge`).
    merge: u32,
    /// A merged kernel compiled unmerged, for launches with too few wide
    /// CTAs for the workers; compiled at the first such launch.
    unmerged: std::sync::OnceLock<Option<Box<CompiledKernel>>>,
    /// Where `compile` was asked to keep machine code, and the warp width
    /// asked for: the unmerged compilation's.
    disk: Option<std::path::PathBuf>,
    asked_width: Option<u32>,
    /// Lanes per warp in the generated code: 32, or 8/16 for kernels that
    /// never observe the GPU warp (narrower vectors fit the registers of
    /// CPUs without AVX-512; see `width`).
    warp: u32,
    /// The kernel has `trap`, `vprintf` or `__assertfail` (host calls).
    host_calls: bool,
    /// With `bar.arrive` or counted barriers: the barrier id of each
    /// barrier site (block index + 1; 255 elsewhere). Empty otherwise.
    bar_ids: Vec<u8>,
    /// Descriptors the per-lane helpers read, owned here; the code finds
    /// them through `desc_table` (env::DESCS). Boxed: the table holds
    /// their addresses, which must not move.
    #[allow(clippy::vec_box)]
    _descs: Vec<Box<InstKind>>,
    desc_table: Vec<u64>,
    /// The kernel uses `bar.red` (the driver combines the warps' shares).
    bar_red: bool,
    /// Global adds each worker may sum in a copy of their buffer.
    deferral: Option<deferred_red::Deferral>,
    /// Two-dimensional grids run y first (see `cta_order`).
    y_first: bool,
    /// Each CTA writes its static shared memory before reading it: the
    /// driver need not clear it (see `shared_init`).
    shared_written_first: bool,
    /// Milliseconds spent compiling (or loading from the disk cache).
    pub compile_ms: f64,
    /// Whether the machine code came from the disk cache.
    pub cache: jit::CacheUse,
    /// The generated LLVM IR (before optimisation), for `inspect`.
    pub llvm_ir: String,
}

// SAFETY: the compiled function is re-entrant (all state is passed in), the
// descriptors are immutable, and the JIT memory lives for the process.
unsafe impl Send for CompiledKernel {}
unsafe impl Sync for CompiledKernel {}

impl CompiledKernel {
    /// How many CTAs share one warp (1 unless blocks are narrower than a
    /// warp and the kernel allows packing them).
    pub fn ctas_per_warp(&self) -> u32 {
        self.pack
    }

    /// How many CTAs neighbouring along x run as one wide CTA (1 unless
    /// the kernel's warps march a loop in step; see `merge`).
    pub fn ctas_merged(&self) -> u32 {
        self.merge
    }

    /// Whether a launch of this merged kernel had too few wide CTAs for
    /// the workers and ran it compiled unmerged.
    pub fn ran_unmerged(&self) -> bool {
        self.unmerged.get().is_some_and(|u| u.is_some())
    }

    /// Whether each CTA writes its static shared memory before reading
    /// it, so that launches skip clearing it (see `shared_init`).
    pub fn writes_shared_first(&self) -> bool {
        self.shared_written_first
    }

    /// Lanes per warp in the generated code (32, or 8/16 where the kernel
    /// allows and the caller, `WARPFOLD_WARP_WIDTH` or the automatic
    /// choice for this CPU asks).
    pub fn warp_lanes(&self) -> u32 {
        self.warp
    }
}

/// Shared-memory accesses that compilations on this thread kept in vector
/// registers (see `shared_regs`): for tests that a kernel's code uses them.
pub fn shared_accesses_in_registers() -> usize {
    shared_regs::PROMOTED.with(|c| c.get())
}

/// Shared-memory writes that compilations on this thread dropped because
/// the CTA ends before anything reads them (see `shared_regs`): for tests.
pub fn shared_writes_dropped() -> usize {
    shared_regs::DROPPED.with(|c| c.get())
}

/// Registers that compilations on this thread kept as one scalar per
/// block row instead of a vector (rows of 16 x 16 blocks, say: see
/// `emit`'s `Gen::rows`): for tests that a kernel takes that path.
pub fn row_registers() -> usize {
    emit::ROW_REGS.with(|c| c.get())
}

/// Bounds tests of a thread's index (`i < n`) that compilations on this
/// thread made lane bits from lane 0's index (see `lower`'s
/// `index_compare_mask`): for tests.
pub fn index_masks() -> usize {
    emit::INDEX_MASKS.with(|c| c.get())
}

/// Accesses through an index that wraps round an array (`if (col >= n)
/// col -= n`) that compilations on this thread tested for consecutive
/// lanes from lane 0's values (see `indexed`'s `Wrapped`): for tests.
pub fn wrapped_indices() -> usize {
    emit::WRAPPED_INDICES.with(|c| c.get())
}

/// Constant warp shuffles that compilations on this thread gave lanes
/// nothing reads (left undefined, see `demanded`): for tests.
pub fn narrowed_shuffles() -> usize {
    emit::NARROWED_SHUFFLES.with(|c| c.get())
}

/// Kernels compiled on this thread that got region functions for their
/// many small regions although their general warp function is too large
/// to inline (see `emit`'s `regions_all_small`): for tests.
pub fn small_region_kernels() -> usize {
    emit::SMALL_REGION_KERNELS.with(|c| c.get())
}

/// Pointers stepped round a loop that compilations on this thread made
/// again at each use from their start and their steps (see
/// `pointer_steps`): for tests that a kernel takes that path.
pub fn stepped_pointers() -> usize {
    pointer_steps::REWRITTEN.with(|c| c.get())
}

/// Loops of kernels compiled on this thread whose CTAs' warps take turns
/// trip by trip (see `lockstep`): for tests that a kernel takes that path.
pub fn loops_in_step() -> usize {
    lockstep::IN_STEP.with(|c| c.get())
}

/// Blocks where compiled code runs two warps' copies of a region
/// interleaved (see `warp_pairs`), over every kernel this process
/// compiled: for tests that a kernel takes that path.
pub fn warp_pair_blocks() -> usize {
    warp_pairs::INTERLEAVED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Divergent branches turned into guarded instructions (see
/// `if_convert`), over every kernel this process compiled (each counts
/// twice): for tests that a kernel takes that path.
pub fn if_converted_branches() -> usize {
    if_convert::CONVERTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Register writes compiled without a blend with the lanes not running
/// them, because the register is live into the writing block alone (see
/// `uniform::live_in_one_block`); a count over every compilation in this
/// process, for tests.
pub fn unblended_writes() -> usize {
    emit::UNBLENDED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Loops of one block compiled with a way straight back for a group of
/// lanes that all go round again (see `lower::round_again`); a count over
/// every compilation in this process, for tests.
pub fn straight_rounds() -> usize {
    lower::ROUNDS_AGAIN.load(std::sync::atomic::Ordering::Relaxed)
}

/// What compiled code is generated for on this machine: LLVM's name of
/// the CPU, the widest vector instructions it uses and the cache the
/// launches count on (see `last_level_cache`), e.g. `znver3, AVX2, 24 MiB
/// of cache`. Machines of one kind differ (AVX-512 on one, AVX2 on the
/// next), and speeds measured on them only compare with this beside them.
pub fn code_target() -> String {
    let (cpu, features) = jit::host();
    format!(
        "{cpu}, {}, {} MiB of cache",
        width::widest_vectors(features),
        last_level_cache() >> 20
    )
}

/// Whether a launch of `grid` CTAs of `block` threads keeps every
/// `%ctaid * %ntid + %ntid` (per dimension) at most 2^31 - 32: then a
/// thread's linear index in 32-bit `int` arithmetic is never negative, and
/// code compiled with `grid_fits` knows it (`gid / 16` is a shift, `gid %
/// 16` a mask; see `lanes::Lanes::max`). The 32 covers the rounding of
/// CTAs packed into warps (see `pack`). Launches that do not fit run code
/// compiled without that knowledge.
pub fn grid_fits(block: Shape, grid: [u32; 3]) -> bool {
    (0..3).all(|d| u64::from(grid[d]) * u64::from(block[d]) + 32 <= 1 << 31)
}

/// Compile `kernel` of `m` for blocks of `shape`, or say why the backend
/// cannot; with `disk`, reuse or store its machine code there. Blocks
/// narrower than a warp share it when the kernel allows (see `pack`).
/// With `grid_fits`, the code is only for launches `grid_fits` accepts.
pub fn compile(
    m: &Module,
    kernel: FuncId,
    shape: Shape,
    grid_fits: bool,
    disk: Option<&std::path::Path>,
    warp_width: Option<u32>,
) -> Result<CompiledKernel, Unsupported> {
    // No code for shapes no launch can have (the launch reports them).
    let threads = shape.iter().try_fold(1u32, |a, &d| a.checked_mul(d));
    if !threads.is_some_and(|n| (1..=1024).contains(&n)) {
        return Err(Unsupported(format!("blocks of {shape:?} threads")));
    }
    if let Some(p) = pack::per_warp(shape).filter(|_| packing_enabled()) {
        // A kernel that does not qualify compiles unpacked.
        if let Ok(k) = compile_as(m, kernel, shape, grid_fits, Grouping::Pack(p), disk, None) {
            return Ok(k);
        }
    }
    if let Some(k) = merge::per_cta(shape).filter(|_| merging_enabled()) {
        // Kept only where it puts a loop in step (else it changes nothing).
        let g = Grouping::Merge(k);
        if let Ok(k) = compile_as(m, kernel, shape, grid_fits, g, disk, warp_width) {
            return Ok(k);
        }
    }
    compile_as(m, kernel, shape, grid_fits, Grouping::One, disk, warp_width)
}

/// How the code's CTAs hold the launch's (see `pack`, `merge`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grouping {
    One,
    /// This many real CTAs per warp.
    Pack(u32),
    /// This many real CTAs per wide CTA.
    Merge(u32),
}

/// `WARPFOLD_STREAMING_STORES=on|off` forces non-temporal stores on or
/// off where `ExecOptions::streaming_stores` leaves it to the launch size.
fn streaming_knob() -> Option<bool> {
    static KNOB: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *KNOB.get_or_init(
        || match std::env::var("WARPFOLD_STREAMING_STORES").ok().as_deref() {
            Some("on") => Some(true),
            Some("off") => Some(false),
            _ => None,
        },
    )
}

/// Bytes of the last-level cache this process can count on (32 MiB if
/// the OS does not say): the largest cache level, but at most 12 MiB for
/// each CPU that shares it. No CPU has more per core (Genoa-X: 1152 MiB for
/// 96 cores); a virtual machine often reports its host's whole cache (300
/// MiB on a 2-CPU VM here, where a 16 MiB copy already runs faster with
/// streaming stores), most of which its neighbours use.
fn last_level_cache() -> u64 {
    static LLC: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LLC.get_or_init(|| {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        (0..8)
            .filter_map(|i| {
                let index = dir.join(format!("index{i}"));
                let size = parse_cache_size(&std::fs::read_to_string(index.join("size")).ok()?)?;
                let sharers = std::fs::read_to_string(index.join("shared_cpu_list"))
                    .ok()
                    .and_then(|s| count_cpu_list(&s))
                    .unwrap_or(1);
                Some(size.min(sharers.max(1) * (12 << 20)))
            })
            .max()
            .unwrap_or(32 << 20)
    })
}

/// `48K`, `2048K`, `32M` (sysfs cache sizes) in bytes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num.parse().ok()?;
    Some(match unit {
        "K" => n << 10,
        "M" => n << 20,
        "G" => n << 30,
        _ => n,
    })
}

/// The number of CPUs in a sysfs CPU list such as `0-3,8,10-11`.
fn count_cpu_list(s: &str) -> Option<u64> {
    let mut n = 0;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<u64>().ok()?.checked_sub(a.parse().ok()?)? + 1,
            None => {
                part.parse::<u64>().ok()?;
                1
            }
        };
    }
    Some(n)
}

/// Bytes of the distinct allocations that the launch's 64-bit arguments
/// point into (a lookup per argument: no snapshot of every allocation on
/// each launch).
fn argument_bytes(func: &warpfold_ir::Function, params: &[u8], mem: &DeviceMemory) -> u64 {
    let mut seen = std::collections::BTreeMap::new();
    for p in func
        .params
        .iter()
        .filter(|p| p.size == 8 && p.array.is_none())
    {
        let Some(addr) = pointer_arg(p, params) else {
            continue;
        };
        if let Some((base, size)) = mem.allocation_at(addr) {
            seen.insert(base, size);
        }
    }
    seen.values().sum()
}

/// The 8 bytes of parameter `p` in the launch's parameter buffer, as an
/// address (`None` when the buffer is too short).
fn pointer_arg(p: &warpfold_ir::Param, params: &[u8]) -> Option<u64> {
    let at = p.offset as usize;
    let word = params.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(word.try_into().ok()?))
}

/// Orders this thread's earlier non-temporal stores before its later
/// stores (and so before the launch's completion is published).
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no operands and no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// `WARPFOLD_PACK=off` keeps one CTA per warp (for comparisons).
fn packing_enabled() -> bool {
    std::env::var("WARPFOLD_PACK").map_or(true, |v| v != "off")
}

/// `WARPFOLD_MERGE=off` keeps one real CTA per CTA (for comparisons).
fn merging_enabled() -> bool {
    std::env::var("WARPFOLD_MERGE").map_or(true, |v| v != "off")
}

fn compile_as(
    m: &Module,
    kernel: FuncId,
    shape: Shape,
    grid_fits: bool,
    grouping: Grouping,
    disk: Option<&std::path::Path>,
    warp_width: Option<u32>,
) -> Result<CompiledKernel, Unsupported> {
    let t0 = Instant::now();
    let (pack, merged) = match grouping {
        Grouping::One => (None, None),
        Grouping::Pack(p) => (Some(p), None),
        Grouping::Merge(k) => (None, Some(k)),
    };
    let f = m
        .functions
        .get(kernel)
        .filter(|f| f.is_kernel)
        .ok_or_else(|| Unsupported("not a kernel".into()))?;
    // A packed kernel's code runs one warp CTA of 32 threads.
    let layout = shared_layout(m, kernel);
    // A wide CTA's code runs K real CTAs side by side along x.
    let (packed, code_shape) = match (pack, merged) {
        (Some(_), _) => (Some((shape, pack::share(&layout))), pack::WARP_CTA),
        (_, Some(k)) => (None, merge::code_shape(shape, k)),
        _ => (None, shape),
    };
    // Blocks every live lane runs together keep their warp collectives
    // inline; finding them needs the kernel split everywhere first.
    let mut split = prepare::prepare(m, kernel, packed, merged.map(|k| (shape, k)), &|_| true)?;
    let cta_threads: u32 = if packed.is_some() {
        0
    } else {
        code_shape.iter().product()
    };
    let in_step = lockstep::take_turns(&mut split, m, cta_threads);
    if merged.is_some() && in_step == 0 {
        return Err(Unsupported("merging CTAs: no loop to put in step".into()));
    }
    let liveness = uniform::liveness(&split);
    let forms = lanes::lane_forms(m, &split, code_shape, grid_fits, 32, &liveness);
    let convergent = &forms.convergent;
    let (cpu, features) = jit::host();
    let threads: u32 = code_shape.iter().product();
    let warp = width::choose(
        &width::Kernel {
            p: &split,
            forms: &forms.forms,
            liveness: &liveness,
            features,
        },
        threads,
        warp_width,
        packed.is_some(),
    );
    if packed.is_some() {
        // The real CTAs of a warp must never wait for each other.
        for b in &split.order {
            let sync = split.func.blocks[*b].insts.iter().find(|i| {
                matches!(
                    i.kind,
                    InstKind::Shfl { .. } | InstKind::WarpSync { .. } | InstKind::Bar { .. }
                )
            });
            if let Some(inst) = sync {
                if !convergent.get(b.0 as usize).copied().unwrap_or(false) {
                    return Err(Unsupported(format!("packing CTAs into a warp: a warp operation or barrier not every lane reaches together (PTX line {})", inst.loc.line)));
                }
            }
        }
    }
    let mut p = prepare::prepare(m, kernel, packed, merged.map(|k| (shape, k)), &|b| {
        !convergent.get(b.0 as usize).copied().unwrap_or(false)
    })?;
    // The same loops as in `split`: kernels that qualify have no warp
    // collectives, so both preparations split alike.
    let in_step = lockstep::take_turns(&mut p, m, cta_threads);
    lockstep::IN_STEP.with(|c| c.set(c.get() + in_step));
    pointer_steps::run(m, &mut p, code_shape, grid_fits);
    let e = match warp {
        8 => emit::emit::<8>(m, &p, &layout, code_shape, grid_fits, cpu, features),
        16 => emit::emit::<16>(m, &p, &layout, code_shape, grid_fits, cpu, features),
        _ => emit::emit::<32>(m, &p, &layout, code_shape, grid_fits, cpu, features),
    }?;
    if let Some(dir) = std::env::var_os("WARPFOLD_DUMP_LLVM") {
        // For people looking at generated code: one .ll per kernel.
        let _ = std::fs::write(
            std::path::Path::new(&dir).join(format!("{}.ll", f.name)),
            &e.ir,
        );
    }
    // LLVM's code generator is slow on very large warp functions (every
    // value lives around the dispatcher loop); such kernels stay on the
    // interpreter until the backend splits them.
    let lines = e.ir.lines().count();
    let limit = ir_line_limit();
    if lines > limit {
        return Err(Unsupported(format!("kernels this large ({lines} lines of LLVM IR; the limit is {limit}, set by WARPFOLD_MAX_IR_LINES)")));
    }
    let (func, cache) = jit::compile(&e.modules, &helpers::table(), disk)?;
    let desc_table = e
        .descs
        .iter()
        .map(|d| &**d as *const InstKind as u64)
        .collect();
    let counted = p.barriers().any(|(k, _)| prepare::counted_barrier(k));
    let bar_ids = if counted {
        let mut ids = vec![255u8; p.order.len() + 1];
        for (i, b) in p.order.iter().enumerate() {
            if let Some(InstKind::Bar {
                id: warpfold_ir::Value::Imm(v),
                ..
            }) = p.func.blocks[*b].insts.first().map(|i| &i.kind)
            {
                ids[i + 1] = *v as u8;
            }
        }
        ids
    } else {
        Vec::new()
    };
    let host_calls = p.func.blocks.values().any(|b| {
        b.insts
            .iter()
            .any(|i| matches!(i.kind, InstKind::Trap | InstKind::Builtin { .. }))
    });
    let bar_red = p.barriers().any(|(k, _)| {
        matches!(
            k,
            InstKind::Bar {
                kind: warpfold_ir::BarKind::Red(_),
                ..
            }
        )
    });
    let shared_written_first = packed.is_none()
        && merged.is_none()
        && shared_init::written_before_read(&p, &layout, shape);
    Ok(CompiledKernel {
        func,
        cache,
        desc_table,
        bar_red,
        state_bytes: e.state_bytes,
        frame_size: p.func.frame_size,
        layout,
        name: f.name.clone(),
        kernel,
        shape,
        grid_fits,
        pack: pack.unwrap_or(1),
        merge: merged.unwrap_or(1),
        unmerged: std::sync::OnceLock::new(),
        disk: disk.map(|d| d.to_path_buf()),
        asked_width: warp_width,
        warp,
        host_calls,
        bar_ids,
        _descs: e.descs,
        deferral: e.deferral,
        y_first: cta_order::y_first(&p),
        shared_written_first,
        compile_ms: t0.elapsed().as_secs_f64() * 1e3,
        llvm_ir: e.ir,
    })
}

/// For a merged kernel, the unmerged one where the launch should run it:
/// fewer than four wide CTAs per worker (a grid of 64 CTAs of a stencil
/// is 16 wide ones: on 64 cores the wide CTAs would leave three quarters
/// idle; on 2, merged runs 0.87 of the time), or a grid too wide for the
/// wide CTA's code (see `grid_fits`). None when it cannot compile.
fn unmerged_for<'k>(
    k: &'k CompiledKernel,
    inst: &Instance,
    cfg: &LaunchConfig,
    opts: &ExecOptions,
) -> Option<&'k CompiledKernel> {
    if k.merge <= 1 {
        return None;
    }
    let wide_grid = [cfg.grid[0].div_ceil(k.merge), cfg.grid[1], cfg.grid[2]];
    let wide: u64 = wide_grid.iter().map(|&d| u64::from(d)).product();
    let workers = match opts.threads {
        0 => warpfold_interp::cores(),
        n => n,
    } as u64;
    let fits = !k.grid_fits || grid_fits(merge::code_shape(cfg.block, k.merge), wide_grid);
    if wide >= 4 * workers && fits {
        return None;
    }
    k.unmerged
        .get_or_init(|| {
            let m = inst.module();
            compile_as(
                m,
                k.kernel,
                k.shape,
                k.grid_fits,
                Grouping::One,
                k.disk.as_deref(),
                k.asked_width,
            )
            .ok()
            .map(Box::new)
        })
        .as_deref()
}

/// Run a compiled kernel over the grid.
pub fn launch(
    k: &CompiledKernel,
    inst: &Instance,
    mem: &DeviceMemory,
    cfg: &LaunchConfig,
    params: &[u8],
    opts: &ExecOptions,
) -> Result<LaunchStats, ExecError> {
    let Some(func) = inst.module().functions.get(k.kernel) else {
        return Err(ExecError::BadLaunch(format!(
            "kernel `{}` is not in this module",
            k.name
        )));
    };
    validate_launch(func, cfg, params.len())?;
    if cfg.block != k.shape {
        return Err(ExecError::BadLaunch(format!(
            "kernel `{}` was compiled for blocks of {:?}, launched with {:?}",
            k.name, k.shape, cfg.block
        )));
    }
    if k.grid_fits && !grid_fits(cfg.block, cfg.grid) {
        return Err(ExecError::BadLaunch(format!(
            "kernel `{}` was compiled for grids of at most 2^31 threads per dimension, launched with {:?} blocks",
            k.name, cfg.grid
        )));
    }
    if let Some(u) = unmerged_for(k, inst, cfg, opts) {
        return launch(u, inst, mem, cfg, params, opts);
    }
    let bad = |m: String| Err(ExecError::BadLaunch(format!("kernel `{}`: {m}", k.name)));
    // A packed kernel runs warp CTAs of 32 threads, P real CTAs each, along
    // x; a merged one wide CTAs of K real ones along x (see `merge`).
    let pack = u64::from(k.pack);
    let merge = u64::from(k.merge);
    let block = if pack > 1 {
        pack::WARP_CTA
    } else if merge > 1 {
        merge::code_shape(cfg.block, k.merge)
    } else {
        cfg.block
    };
    let grid = [
        (u64::from(cfg.grid[0])).div_ceil(pack * merge) as u32,
        cfg.grid[1],
        cfg.grid[2],
    ];
    let nthreads = block.iter().map(|&d| u64::from(d)).product::<u64>();
    let dyn_base = k.layout.dynamic_base();
    let shared_total = dyn_base + u64::from(cfg.dynamic_shared);
    if shared_total > MAX_SHARED {
        return bad(format!(
            "needs {shared_total} bytes of shared memory; the limit is {MAX_SHARED}"
        ));
    }
    let total = u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]);
    let workers = match opts.threads {
        0 => warpfold_interp::cores(),
        n => n,
    }
    .min(total.max(1) as usize)
    .max(1);
    let globals: Vec<u64> = (0..inst.module().globals.len())
        .map(|i| inst.global_addr(warpfold_ir::GlobalId(i as u32)))
        .collect();
    // Each lane's %tid, per warp: the same in every CTA.
    let width = k.warp as usize;
    let nwarps_l = (nthreads as usize).div_ceil(width);
    let mut tids = vec![0u32; nwarps_l * 3 * width];
    for w in 0..nwarps_l {
        for l in 0..width {
            let t = (w * width + l) as u32;
            let (bx, by) = (block[0], block[1]);
            let v = [t % bx, (t / bx) % by, t / (bx * by)];
            for c in 0..3 {
                tids[(w * 3 + c) * width + l] = v[c];
            }
        }
    }
    // A word written per thread and (at least) one read: the launch's
    // data fill the last-level cache. Or the buffers its arguments point
    // into fill half of it: a thread that loops touches more than a word
    // (stencil3d, 16 MB of buffers with a 32 MB cache: its output lines
    // were read before being written, 2.5 -> 1.5 ms with streaming).
    let streaming = opts
        .streaming_stores
        .or_else(streaming_knob)
        .unwrap_or_else(|| {
            total.saturating_mul(nthreads * 8) >= last_level_cache()
                || argument_bytes(func, params, mem) >= last_level_cache() / 2
        });
    // Compiled loops poll the cancel flag; keep it on a cache line of its
    // own, away from the CTA counters the workers update.
    let cancel_line = Box::new(CacheLine(AtomicU32::new(0)));
    let cancel = &cancel_line.0;
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let start = Instant::now();
    let done = AtomicBool::new(false);
    // About 16 chunks per worker, at most 64 CTAs each.
    let chunk = (total / (workers as u64 * 16)).clamp(1, 64);
    // Each worker first runs its own contiguous share of the grid, a
    // chunk at a time, then helps with what is left of the others'. The
    // share is the same on every launch, so what a kernel left in a
    // core's caches serves that core again (as OpenMP's static schedule).
    let shares: Vec<CacheLine<AtomicU64>> = (0..workers as u64)
        .map(|w| CacheLine(AtomicU64::new(total * w / workers as u64)))
        .collect();
    let share_end = |v: usize| total * (v as u64 + 1) / workers as u64;
    let shares = &shares;
    let (globals, tids) = (&globals, &tids);
    // Host calls check the addresses they read against the allocations.
    let memory = k.host_calls.then(|| mem.snapshot());
    let memory = &memory;
    // One worker's share: CTAs taken a chunk at a time until none is left.
    // Global adds the workers sum in copies of their buffer (see
    // `deferred_red`), when this launch's arguments allow it.
    let red_target = k.deferral.as_ref().and_then(|d| {
        let (base, len) = d.target(func, params, globals, |a| mem.allocation_at(a))?;
        Some((base, len, d.bytes))
    });
    // The order CTAs run in (y first: consecutive CTAs share `%ctaid.x`).
    let y_first =
        k.y_first && pack == 1 && merge == 1 && grid[0] > 1 && grid[1] > 1 && grid[2] == 1;
    let share = |w: usize, red: Option<(u64, u64, u64)>| {
        // A packed warp holds P real CTAs' shared memory, one share apart.
        let shared_len = if pack > 1 {
            pack * pack::share(&k.layout)
        } else {
            shared_total
        };
        // Each buffer the worker writes owns the cache lines around it
        // (see `own_buffer`); shared memory's slack lies within that.
        let shared_bytes = shared_len as usize + 16;
        // Each CTA starts from cleared shared memory, unless every CTA
        // writes it before reading it (see `shared_init`).
        let clear_shared =
            shared_len > 0 && !(k.shared_written_first && pack == 1 && cfg.dynamic_shared == 0);
        let (mut shared_buf, s0) = own_buffer::<u8>(shared_bytes);
        let shared = &mut shared_buf[s0..s0 + shared_bytes];
        let local_bytes = (nthreads * k.frame_size.max(1)) as usize + 16;
        let (mut local_buf, l0) = own_buffer::<u8>(local_bytes);
        let local = &mut local_buf[l0..l0 + local_bytes];
        let nwarps = (nthreads as usize).div_ceil(width);
        let all_warps = emit::low_bits(nwarps as u32);
        // The states start 128-byte aligned (whole vector registers live
        // there).
        let state_words = (nwarps * k.state_bytes).div_ceil(8) + 16;
        let (mut states_buf, st0) = own_buffer::<u64>(state_words);
        let states = &mut states_buf[st0..st0 + state_words];
        // The tables of warps' first calls and codes the compiled code
        // reads and writes, the worker's own (see `CtaTables`).
        let mut tables = CtaTables::new(nwarps);
        // Each warp's live lanes, padded to 32 warps (a fixed-size copy
        // per CTA, not a call to memmove).
        let mut lanes = [0u32; 32];
        for (w, l) in warp_lanes(nthreads as usize, width).into_iter().enumerate() {
            lanes[w] = l;
        }
        // The last warp CTA of a row may hold fewer real CTAs.
        let real_cta_lanes = (32 / pack.max(1)) as u32;
        let tail = u64::from(cfg.grid[0]) % pack.max(1);
        let mut tail_lanes = lanes;
        let mut tail_warps = all_warps;
        if pack > 1 && tail != 0 {
            tail_lanes[0] = (1u32 << (tail as u32 * real_cta_lanes)) - 1;
        }
        // The last wide CTA of a row may hold fewer real CTAs: the warps
        // of the missing ones never start.
        let merge_tail = u64::from(cfg.grid[0]) % merge;
        if merge > 1 && merge_tail != 0 {
            for (w, lanes) in tail_lanes.iter_mut().enumerate().take(nwarps) {
                let (cta, _) = merge::real_thread(cfg.block, k.merge, (w * width) as u32);
                if u64::from(cta) >= merge_tail {
                    *lanes = 0;
                    tail_warps &= !(1 << w);
                }
            }
        }
        let mut envv = [0u64; env::LEN];
        envv[env::PARAMS] = params.as_ptr() as u64;
        envv[env::SHARED] = shared.as_mut_ptr() as u64;
        envv[env::CONST] = inst.const_bank().as_ptr() as u64;
        envv[env::LOCAL] = local.as_mut_ptr() as u64;
        envv[env::FRAME] = k.frame_size;
        for d in 0..3 {
            envv[env::NCTAID + d] = u64::from(cfg.grid[d]);
            envv[env::NTID + d] = u64::from(cfg.block[d]);
        }
        envv[env::DYN_SMEM] = u64::from(cfg.dynamic_shared);
        envv[env::TOTAL_SMEM] = shared_total;
        envv[env::GLOBALS] = globals.as_ptr() as u64;
        envv[env::SMID] = w as u64;
        envv[env::NSMID] = workers as u64;
        envv[env::CONST_LEN] = inst.const_bank().len() as u64;
        envv[env::PARAMS_LEN] = params.len() as u64;
        envv[env::LOCAL_LEN] = nthreads * k.frame_size;
        envv[env::CANCEL] = cancel as *const AtomicU32 as u64;
        envv[env::TID] = tids.as_ptr() as u64;
        envv[env::DESCS] = k.desc_table.as_ptr() as u64;
        envv[env::STREAM] = if streaming { 63 } else { u64::MAX };
        if let Some((base, len, copy)) = red {
            envv[env::RED_BASE] = base;
            envv[env::RED_LEN] = len;
            envv[env::RED_COPY] = copy;
        }
        let range = |p: *const u8, len: usize| p as u64..p as u64 + len as u64;
        let host = memory.as_ref().map(|m| helpers::Host {
            memory: m.clone(),
            spaces: [
                range(local.as_ptr(), local.len()),
                range(shared.as_ptr(), shared.len()),
                range(inst.const_bank().as_ptr(), inst.const_bank().len()),
            ],
            printf: opts.printf.as_deref(),
            cancel,
            fault: Default::default(),
        });
        envv[env::HOST] = host
            .as_ref()
            .map_or(0, |h| h as *const helpers::Host as u64);
        // The CTA's barrier table (counted barriers); the code writes it
        // through the pointer, the driver reads it between rounds.
        let (mut bars_buf, b0) = own_buffer::<u32>(33);
        let bars = bars_buf[b0..].as_mut_ptr();
        envv[env::BARS] = bars as u64;
        // CTAs are taken a chunk at a time: a shared counter bumped per
        // CTA costs more than a small CTA's work.
        let (mut i, mut end) = (0u64, 0u64);
        let mut from = 0;
        // The last CTA's linear index and id: the next one in a chunk is
        // found by a carry, not by two 64-bit divisions (a tenth of an
        // empty CTA's cost).
        let mut last: Option<(u64, [u32; 3])> = None;
        // CTAs with nothing per CTA but the call and the zeroing of shared
        // memory (no host calls, counted barriers, local frames or
        // packing) run a chunk at a time in a tight loop, the stop and
        // cancel flags read once per chunk (an empty CTA's driver time was
        // about half its cost).
        let plain =
            host.is_none() && k.bar_ids.is_empty() && k.frame_size == 0 && pack == 1 && merge == 1;
        // A failed CTA stops the launch; the first in x-first order wins.
        let fail = |cta: u64, e: ExecError| {
            stop.store(true, Ordering::Relaxed);
            let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| cta < *j) {
                *slot = Some((cta, e));
            }
        };
        // The watchdog's cancel flag stops every worker.
        let cancelled = || {
            let c = cancel.load(Ordering::Relaxed) != 0;
            if c {
                stop.store(true, Ordering::Relaxed);
            }
            c
        };
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            while i == end {
                if from == workers {
                    return;
                }
                let v = (w + from) % workers;
                let s = shares[v].0.fetch_add(chunk, Ordering::Relaxed);
                if s < share_end(v) {
                    (i, end) = (s, (s + chunk).min(share_end(v)));
                } else {
                    from += 1;
                }
            }
            if plain {
                // The rest of the chunk, one CTA after the other (see `plain`).
                let g = grid;
                let mut id = ctaid_after(last, i, g, y_first);
                loop {
                    for d in 0..3 {
                        envv[env::CTAID + d] = u64::from(id[d]);
                    }
                    if clear_shared {
                        shared.fill(0);
                    }
                    let r = run_cta(k, &envv, states, &lanes, all_warps, id, bars, &mut tables);
                    if let Err(e) = r {
                        return fail(cta_index(i, id, g, y_first), e);
                    }
                    if i + 1 == end {
                        break;
                    }
                    i += 1;
                    id = next_ctaid(id, g, y_first);
                }
                last = Some((i, id));
                i += 1;
                if cancelled() {
                    return;
                }
                continue;
            }
            let g = grid;
            let ctaid = ctaid_after(last, i, g, y_first);
            last = Some((i, ctaid));
            for d in 0..3 {
                envv[env::CTAID + d] = u64::from(ctaid[d]);
            }
            // Fresh shared memory reads as zeros, as on the interpreter
            // (unless no CTA can read what it did not write: `clear_shared`);
            // local memory too (none to clear without a frame).
            if clear_shared {
                shared.fill(0);
            }
            if k.frame_size > 0 {
                local.fill(0);
            }
            let cta = cta_index(i, ctaid, g, y_first);
            i += 1;
            let last_in_row = ctaid[0] + 1 == g[0];
            let (live, warps) = if last_in_row {
                (&tail_lanes, tail_warps)
            } else {
                (&lanes, all_warps)
            };
            // Errors name the first real CTA of a packed warp or wide CTA.
            let first = [ctaid[0] * (pack * merge) as u32, ctaid[1], ctaid[2]];
            if !k.bar_ids.is_empty() {
                // SAFETY: the table has 33 words; nothing else refers to it now.
                unsafe { std::ptr::write_bytes(bars, 0, 33) };
            }
            let mut r = run_cta(k, &envv, states, live, warps, first, bars, &mut tables);
            if let Some((t, line, kind)) = host.as_ref().and_then(|h| h.fault.take()) {
                r = Err(fault_error(k, cfg.block, first, t, line, kind));
            }
            if let Err(e) = r {
                return fail(cta, e);
            }
            if cancelled() {
                return;
            }
        }
    };
    let finish = || {
        if streaming {
            // The worker's non-temporal stores reach memory before the
            // launch is seen to end.
            store_fence();
        }
    };
    let work = |w: usize| {
        let Some((base, len, bytes)) = red_target else {
            share(w, None);
            return finish();
        };
        let words = len.div_ceil(8) as usize;
        let (mut copy_buf, c0) = own_buffer::<u64>(words);
        let copy = &mut copy_buf[c0..c0 + words];
        // The code adds to the copy only where a whole word of `bytes`
        // lies inside the buffer.
        let inside = (len + 1).saturating_sub(u64::from(bytes));
        share(w, Some((base, inside, copy.as_mut_ptr() as u64)));
        deferred_red::add_back(base, len, bytes, copy);
        finish();
    };
    // One worker and no watchdog: the calling thread runs the grid (a
    // launch costs no thread start). Otherwise the pool's threads do.
    if workers == 1 && deadline.is_none() {
        work(0);
    } else {
        std::thread::scope(|s| {
            // The watchdog: raises the cancel flag the compiled loops poll.
            if let Some(d) = deadline {
                let (cancel, done) = (&cancel, &done);
                s.spawn(move || {
                    crate::pool::unbind_thread();
                    while !done.load(Ordering::Relaxed) {
                        if Instant::now() >= d {
                            cancel.store(1, Ordering::Relaxed);
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                });
            }
            if workers == 1 {
                work(0);
            } else {
                // Worker w runs share w (the same thread each launch);
                // shares without a thread are left to the others.
                pool::run(workers, &work);
            }
            done.store(true, Ordering::Relaxed);
        });
    }
    if let Some((_, e)) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if cancel.load(Ordering::Relaxed) != 0 {
        let secs = deadline.map_or(0.0, |d| d.saturating_duration_since(start).as_secs_f64());
        return Err(ExecError::Timeout {
            kernel: k.name.clone(),
            secs,
        });
    }
    Ok(LaunchStats {
        thread_instructions: 0,
    })
}

/// The id of the CTA after `id` in the launch's order: y first (see
/// `CompiledKernel::y_first`) or x first.
#[inline]
fn next_ctaid([x, y, z]: [u32; 3], g: [u32; 3], y_first: bool) -> [u32; 3] {
    if y_first {
        if y + 1 < g[1] {
            [x, y + 1, z]
        } else {
            [x + 1, 0, z]
        }
    } else if x + 1 < g[0] {
        [x + 1, y, z]
    } else if y + 1 < g[1] {
        [0, y + 1, z]
    } else {
        [0, 0, z + 1]
    }
}

/// The id of the `i`th CTA in the launch's order, by a carry from the
/// last CTA run (`last`: its place and id) when `i` follows it.
#[inline]
fn ctaid_after(last: Option<(u64, [u32; 3])>, i: u64, g: [u32; 3], y_first: bool) -> [u32; 3] {
    match last {
        Some((prev, id)) if prev + 1 == i => next_ctaid(id, g, y_first),
        _ => ctaid_at(i, g, y_first),
    }
}

/// The id of the `i`th CTA in the launch's order.
fn ctaid_at(i: u64, g: [u32; 3], y_first: bool) -> [u32; 3] {
    if y_first {
        [
            (i / u64::from(g[1])) as u32,
            (i % u64::from(g[1])) as u32,
            0,
        ]
    } else {
        [
            (i % u64::from(g[0])) as u32,
            ((i / u64::from(g[0])) % u64::from(g[1])) as u32,
            (i / (u64::from(g[0]) * u64::from(g[1]))) as u32,
        ]
    }
}

/// Errors name the first failing CTA in x-first order, as the interpreter
/// runs them, whichever order this launch takes (`i`: the CTA's place in
/// the launch's order).
fn cta_index(i: u64, id: [u32; 3], g: [u32; 3], y_first: bool) -> u64 {
    if y_first {
        u64::from(id[0]) + u64::from(id[1]) * u64::from(g[0])
    } else {
        i
    }
}

/// A host call's fault as the interpreter reports it: the real block and
/// thread of the lane (`t`: its index in the warp CTA when packed).
fn fault_error(
    k: &CompiledKernel,
    block: [u32; 3],
    first: [u32; 3],
    t: u32,
    line: u32,
    kind: warpfold_interp::FaultKind,
) -> ExecError {
    let n = block.iter().product::<u32>().max(1);
    let (bx, by) = (block[0].max(1), block[1].max(1));
    let (cta, thread) = if k.merge > 1 {
        merge::real_thread(block, k.merge, t)
    } else {
        let (cta, t) = if k.pack > 1 { (t / n, t % n) } else { (0, t) };
        (cta, [t % bx, (t / bx) % by, t / (bx * by)])
    };
    ExecError::Fault(Box::new(warpfold_interp::Fault {
        kernel: k.name.clone(),
        block: [first[0] + cta, first[1], first[2]],
        thread,
        line,
        kind,
    }))
}

fn word(st: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([st[off], st[off + 1], st[off + 2], st[off + 3]])
}

fn set_word(st: &mut [u8], off: usize, v: u32) {
    st[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// Run one CTA: warps in turn until all exit, releasing barriers.
/// The live lanes of each warp of a CTA (a partial last warp has fewer).
fn warp_lanes(nthreads: usize, width: usize) -> Vec<u32> {
    (0..nthreads.div_ceil(width))
        .map(|w| emit::low_bits((nthreads - w * width).min(width) as u32))
        .collect()
}

/// Runs a CTA. The compiled code's first call finishes most CTAs (it
/// releases plain barriers itself), so it is made here, in line in the
/// worker's loop; rounds after it (barriers the driver releases, yields)
/// are `run_rounds`'. `all`: the CTA's warps as a bit set. A grid of
/// empty CTAs spent half its time in this function before (a division,
/// a large frame): 34-50 ns a CTA on one core.
#[inline]
#[allow(clippy::too_many_arguments)]
fn run_cta(
    k: &CompiledKernel,
    envv: &[u64],
    states_words: &mut [u64],
    lanes: &[u32; 32],
    all: u32,
    ctaid: [u32; 3],
    bars: *mut u32,
    tables: &mut CtaTables,
) -> Result<(), ExecError> {
    // SAFETY: u64 storage viewed as bytes (alignment only grows).
    let bytes: &mut [u8] = unsafe {
        std::slice::from_raw_parts_mut(states_words.as_mut_ptr() as *mut u8, states_words.len() * 8)
    };
    // First calls start the warps (they read no state).
    tables.reset(lanes);
    let CtaTables { fresh, codes, .. } = tables;
    // Warps not finished, as a bit set (at most 32 warps).
    let mut running = all;
    // SAFETY: as in `run_rounds`.
    let r = unsafe {
        (k.func)(
            bytes.as_mut_ptr(),
            envv.as_ptr(),
            k.state_bytes as u64,
            &mut running,
            fresh.as_mut_ptr(),
            codes.as_mut_ptr(),
        )
    };
    if r == 3 || running == 0 {
        return Ok(());
    }
    run_rounds(k, envv, bytes, *fresh, running, *codes, ctaid, bars)
}

/// Each warp's first-call lanes and last code, as the compiled code reads
/// and writes them (`wf_cta`'s `fresh` and `codes`). Only the entries of
/// the CTA's warps are reset per CTA, in one of three fixed sizes: the
/// code and the driver never look past the last warp, and a copy and a
/// clear of all 32 entries were a sixth of the driver's time per CTA on a
/// grid of empty CTAs.
struct CtaTables {
    fresh: [u32; 32],
    codes: [u32; 32],
    /// 8, 16 or 32: at least the CTA's warps.
    size: usize,
}

impl CtaTables {
    fn new(warps: usize) -> CtaTables {
        CtaTables {
            fresh: [0; 32],
            codes: [0; 32],
            size: [8, 16, 32].into_iter().find(|&n| warps <= n).unwrap_or(32),
        }
    }

    /// A CTA's start: every warp fresh with `lanes`, no codes yet.
    #[inline]
    fn reset(&mut self, lanes: &[u32; 32]) {
        match self.size {
            8 => {
                self.fresh[..8].copy_from_slice(&lanes[..8]);
                self.codes[..8].fill(0);
            }
            16 => {
                self.fresh[..16].copy_from_slice(&lanes[..16]);
                self.codes[..16].fill(0);
            }
            _ => {
                self.fresh = *lanes;
                self.codes = [0; 32];
            }
        }
    }
}

/// The rounds of a CTA after the first call (whose codes `running` and
/// `codes` hold): release barriers, resume warps, until all finish.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn run_rounds(
    k: &CompiledKernel,
    envv: &[u64],
    bytes: &mut [u8],
    mut fresh: [u32; 32],
    mut running: u32,
    mut codes: [u32; 32],
    ctaid: [u32; 3],
    bars: *mut u32,
) -> Result<(), ExecError> {
    let sb = k.state_bytes;
    // The first round's call was made by `run_cta`.
    let mut called = true;
    loop {
        let (mut at_barrier, mut stuck) = (0usize, 0usize);
        let mut yielded = false;
        if !called {
            // SAFETY: the state buffers hold `state_bytes` for each of the
            // CTA's warps, `fresh` and `codes` have an entry per warp, and
            // the environment describes live buffers for this CTA. The code
            // may release plain barriers itself and run more rounds; it
            // leaves in `running` the warps of the round whose codes it
            // returns.
            let r = unsafe {
                (k.func)(
                    bytes.as_mut_ptr(),
                    envv.as_ptr(),
                    sb as u64,
                    &mut running,
                    fresh.as_mut_ptr(),
                    codes.as_mut_ptr(),
                )
            };
            if r == 3 {
                return Ok(());
            }
        }
        called = false;
        let mut todo = running;
        while todo != 0 {
            let w = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            match codes[w] {
                0 => running &= !(1 << w),
                1 => at_barrier += 1,
                3 => return Ok(()),
                4 => yielded = true,
                _ => stuck += 1,
            }
        }
        if running == 0 {
            return Ok(());
        }
        if yielded {
            continue;
        }
        if !k.bar_ids.is_empty() {
            release_counted(k, bytes, running, ctaid, bars)?;
            continue;
        }
        // Every warp still running waits at a barrier: release it if all
        // their live lanes are there, at the same place. bar.red combines
        // the warps' shares; every warp reads the result when it resumes.
        let mut site: Option<u32> = None;
        let mut ok = stuck == 0;
        let (mut popc, mut all, mut any) = (0u32, 1u32, 0u32);
        let mut todo = running;
        while todo != 0 {
            let w = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let st = &bytes[w * sb..(w + 1) * sb];
            let (live, wb, s) = (
                word(st, state::LIVE),
                word(st, state::WAIT_BAR),
                word(st, state::BAR_SITE),
            );
            if wb != live {
                ok = false;
            }
            if wb != 0 {
                let diverged = s == u32::MAX || site.is_some_and(|x| x != s);
                if diverged {
                    return Err(ExecError::BarrierDivergence {
                        kernel: k.name.clone(),
                        block: ctaid,
                        detail: "threads wait at different barriers (a CTA-wide barrier must be reached by all threads at the same place)".into(),
                    });
                }
                site = Some(s);
            }
            if k.bar_red {
                popc += word(st, state::RED_POPC);
                all &= word(st, state::RED_AND);
                any |= word(st, state::RED_OR);
            }
        }
        if !ok || at_barrier == 0 {
            return Err(ExecError::Deadlock {
                kernel: k.name.clone(),
                block: ctaid,
                detail: format!(
                    "no thread can continue: {at_barrier} warp(s) wait at a barrier, {stuck} warp(s) wait at warp operations whose lanes never arrive"
                ),
            });
        }
        let mut todo = running;
        while todo != 0 {
            let w = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let st = &mut bytes[w * sb..(w + 1) * sb];
            set_word(st, state::WAIT_BAR, 0);
            set_word(st, state::BAR_SITE, 0);
            if k.bar_red {
                set_word(st, state::RED_RESULT, popc);
                set_word(st, state::RED_RESULT + 4, all);
                set_word(st, state::RED_RESULT + 8, any);
                set_word(st, state::RED_POPC, 0);
                set_word(st, state::RED_AND, 1);
                set_word(st, state::RED_OR, 0);
            }
        }
    }
}

/// Between rounds of a kernel with `bar.arrive` or counted barriers:
/// release each barrier whose expected threads have arrived (all live
/// threads waiting there, for one without a count), as the interpreter
/// does; none means no thread can go on.
fn release_counted(
    k: &CompiledKernel,
    bytes: &mut [u8],
    running: u32,
    ctaid: [u32; 3],
    bars: *mut u32,
) -> Result<(), ExecError> {
    let sb = k.state_bytes;
    // SAFETY: the worker's 33-word table; the compiled code is not running.
    let tab = unsafe { std::slice::from_raw_parts_mut(bars, 33) };
    let err = |detail: String| ExecError::BarrierDivergence {
        kernel: k.name.clone(),
        block: ctaid,
        detail,
    };
    if tab[32] != 0 {
        return Err(err(
            "a barrier was used with two different thread counts at once".into(),
        ));
    }
    let warps = || {
        let mut todo = running;
        std::iter::from_fn(move || {
            (todo != 0).then(|| {
                let w = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                w
            })
        })
    };
    let live: u32 = warps()
        .map(|w| word(&bytes[w * sb..], state::LIVE).count_ones())
        .sum();
    let id_at = |site: u32| k.bar_ids.get(site as usize).copied().unwrap_or(255);
    let mut released = false;
    for id in 0..16u8 {
        let (arrived, expected) = (tab[id as usize], tab[16 + id as usize]);
        if arrived == 0 {
            continue;
        }
        let mut waiting = 0;
        let mut site = None;
        for w in warps() {
            let st = &bytes[w * sb..(w + 1) * sb];
            let (wb, s) = (word(st, state::WAIT_BAR), word(st, state::BAR_SITE));
            if wb == 0 {
                continue;
            }
            if s == u32::MAX {
                return Err(err("lanes of one warp wait at different barriers".into()));
            }
            if id_at(s) == id {
                waiting += wb.count_ones();
                if expected == 0 && site.is_some_and(|x| x != s) {
                    return Err(err("threads wait at different barriers (a CTA-wide barrier must be reached by all threads at the same place)".into()));
                }
                site = Some(s);
            }
        }
        let done = if expected != 0 {
            arrived >= expected
        } else {
            waiting == live
        };
        if !done {
            continue;
        }
        for w in warps() {
            let st = &mut bytes[w * sb..(w + 1) * sb];
            if word(st, state::WAIT_BAR) != 0 && id_at(word(st, state::BAR_SITE)) == id {
                set_word(st, state::WAIT_BAR, 0);
                set_word(st, state::BAR_SITE, 0);
            }
        }
        // As the interpreter: a released barrier starts again from zero.
        tab[id as usize] = 0;
        tab[16 + id as usize] = 0;
        released = true;
    }
    if released {
        return Ok(());
    }
    Err(ExecError::Deadlock {
        kernel: k.name.clone(),
        block: ctaid,
        detail: "no thread can continue: warps wait at barriers whose threads never all arrive"
            .into(),
    })
}

/// A kernel compiled for one block shape, or why it could not be.
type Compiled = Arc<Result<CompiledKernel, Unsupported>>;

/// Compiled kernels of one module, in memory; machine code also goes to
/// the disk cache folder, if any.
pub struct Cache {
    map: Mutex<std::collections::HashMap<(FuncId, Shape, bool), Compiled>>,
    disk: Option<std::path::PathBuf>,
    warp_width: Option<u32>,
}

impl Default for Cache {
    /// With the default disk cache folder (see [`default_disk_cache`]).
    fn default() -> Self {
        Cache::new(default_disk_cache())
    }
}

/// The disk cache folder used unless a caller says otherwise:
/// `$WARPFOLD_CACHE_DIR` (`off` disables it), else
/// `$XDG_CACHE_HOME/warpfold/kernels`, else `~/.cache/warpfold/kernels`.
pub fn default_disk_cache() -> Option<std::path::PathBuf> {
    disk_cache::dir()
}

impl Cache {
    pub fn new(disk: Option<std::path::PathBuf>) -> Self {
        Cache {
            map: Mutex::default(),
            disk,
            warp_width: None,
        }
    }

    /// Lanes per warp of the code this cache compiles: 8, 16 or 32 where
    /// a kernel allows (see [`CompiledKernel::warp_lanes`]); `None` (the
    /// default) leaves it to `WARPFOLD_WARP_WIDTH`, else to the CPU and
    /// the kernel.
    pub fn with_warp_width(mut self, lanes: Option<u32>) -> Self {
        self.warp_width = lanes;
        self
    }

    /// The code for blocks of `shape` and launches that `grid_fits` (or
    /// any launch), compiled on first use.
    pub fn get_or_compile(
        &self,
        m: &Module,
        kernel: FuncId,
        shape: Shape,
        grid_fits: bool,
    ) -> Arc<Result<CompiledKernel, Unsupported>> {
        let key = (kernel, shape, grid_fits);
        if let Some(c) = self.map.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return c.clone();
        }
        let c = Arc::new(compile(
            m,
            kernel,
            shape,
            grid_fits,
            self.disk.as_deref(),
            self.warp_width,
        ));
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, c.clone());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::{argument_bytes, count_cpu_list, grid_fits, own_buffer, parse_cache_size, OWN_PAD};
    use warpfold_interp::DeviceMemory;
    use warpfold_ir::{Function, Param, ParamBinding, Ty};

    #[test]
    fn sysfs_cache_sizes_and_cpu_lists_parse() {
        assert_eq!(parse_cache_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_cache_size("300M"), Some(300 << 20));
        assert_eq!(parse_cache_size("K"), None);
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn argument_bytes_count_each_buffer_the_pointers_reach_once() {
        let mem = DeviceMemory::new();
        let (a, b) = (mem.alloc(1000).unwrap(), mem.alloc(24).unwrap());
        let mut f = Function::new("k", true);
        // Two pointers into `a` (its start and its middle), one into `b`,
        // a 32-bit argument and a 64-bit integer that points nowhere.
        let words = [a.base, a.base + 500, b.base, 7, 8];
        let mut params = Vec::new();
        for (i, (&w, ty)) in words
            .iter()
            .zip([Ty::U64, Ty::U64, Ty::U64, Ty::U32, Ty::U64])
            .enumerate()
        {
            let size = u64::from(ty.bits() / 8);
            f.params.push(Param {
                name: format!("p{i}"),
                ty,
                array: None,
                align: size as u32,
                size,
                offset: params.len() as u64,
                ptr_space: None,
                binding: ParamBinding::KernelBuffer,
            });
            params.extend_from_slice(&w.to_le_bytes()[..size as usize]);
            params.resize(params.len().next_multiple_of(8), 0);
        }
        assert_eq!(argument_bytes(&f, &params, &mem), 1024);
        // A parameter buffer cut short reads no pointer past its end.
        assert_eq!(argument_bytes(&f, &params[..12], &mem), 1000);
    }

    #[test]
    fn worker_buffers_start_aligned_and_own_the_lines_around_them() {
        for len in [0, 1, 33, 1000, 4096 + 3] {
            for _ in 0..4 {
                let (b, at) = own_buffer::<u8>(len);
                assert_eq!(b.as_ptr().wrapping_add(at) as usize % 128, 0);
                assert!(at >= OWN_PAD && b.len() - (at + len) >= OWN_PAD, "{len}");
                let (w, at) = own_buffer::<u64>(len);
                assert_eq!(w.as_ptr().wrapping_add(at) as usize % 128, 0);
                assert!(at * 8 >= OWN_PAD && (w.len() - (at + len)) * 8 >= OWN_PAD);
            }
        }
    }

    #[test]
    fn grids_fit_up_to_2_pow_31_threads_per_dimension_less_a_warp() {
        // 2^21 - 1 CTAs of 1024: 2^31 - 1024 threads.
        assert!(grid_fits([1024, 1, 1], [(1 << 21) - 1, 1, 1]));
        assert!(!grid_fits([1024, 1, 1], [1 << 21, 1, 1]));
        // Packed CTAs round up to whole warps: 32 threads of slack.
        assert!(grid_fits([16, 1, 1], [((1 << 31) - 32) / 16, 1, 1]));
        assert!(!grid_fits([16, 1, 1], [((1 << 31) - 32) / 16 + 1, 1, 1]));
        // y and z can never exceed it (65535 CTAs of at most 1024).
        assert!(grid_fits([1, 1024, 1], [1, 65535, 1]));
        assert!(grid_fits([1, 1, 64], [1, 1, 65535]));
    }
}
