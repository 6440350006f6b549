//! LLVM: parse the generated IR, optimise it, JIT it for this CPU.

use crate::prepare::Unsupported;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::passes::PassManager;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::values::AsValueRef;
use inkwell::OptimizationLevel;
use llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use llvm_sys::orc2::lljit::*;
use llvm_sys::orc2::*;
use std::sync::OnceLock;

/// `fn(states, env, state_bytes, running, fresh, codes) -> 0 | 3`: one
/// round of a CTA's warps (see `CTA_FN` in `emit`).
pub type CtaFn =
    unsafe extern "C" fn(*mut u8, *const u64, u64, *mut u32, *mut u32, *mut u32) -> u32;

/// Host CPU name and feature string for code generation.
pub fn host() -> &'static (String, String) {
    static HOST: OnceLock<(String, String)> = OnceLock::new();
    HOST.get_or_init(|| {
        let _ = Target::initialize_native(&InitializationConfig::default());
        // For people tuning code generation: LLVM's own options, e.g.
        // WARPFOLD_LLVM_ARGS="-time-passes", after our defaults (each
        // unless the user sets it):
        // - alias analysis follows every use of the CTA function's
        //   `noalias` state pointer (LLVM stops after 20 and then assumes
        //   it escaped): an unrolled CTA's warps' states are addressed
        //   hundreds of times, and only then are saved registers forwarded
        //   from one region to the next and dead saves dropped;
        // - the instruction scheduler tracks memory dependencies exactly in
        //   blocks of up to 200 memory operations, not 1000: the unrolled
        //   rounds of a CTA make long blocks, and exact tracking in them
        //   made code generation 3x slower (scan: 0.9 s).
        // - GVN (run on unrolled rounds only) looks back 2000 instructions,
        //   not 100, for the save that a warp's register reload reads: in
        //   a scan's straight line of 8 warps' regions the save is further
        //   back, and forwarding it makes the shared addresses constants.
        let user = std::env::var("WARPFOLD_LLVM_ARGS").unwrap_or_default();
        let defaults = [
            ("-capture-tracking-max-uses-to-explore", "100000"),
            ("-dag-maps-huge-region", "200"),
            ("-memdep-block-scan-limit", "2000"),
        ];
        let mut args: Vec<String> = defaults
            .iter()
            .filter(|(name, _)| !user.contains(name))
            .map(|(name, v)| format!("{name}={v}"))
            .collect();
        args.extend(user.split_whitespace().map(str::to_string));
        {
            let owned: Vec<std::ffi::CString> = std::iter::once("warpfold".to_string())
                .chain(args)
                .filter_map(|a| std::ffi::CString::new(a).ok())
                .collect();
            let ptrs: Vec<*const std::ffi::c_char> = owned.iter().map(|a| a.as_ptr()).collect();
            // SAFETY: argv-style array of NUL-terminated strings that
            // outlive the call; LLVM copies what it keeps.
            unsafe {
                llvm_sys::support::LLVMParseCommandLineOptions(
                    ptrs.len() as i32,
                    ptrs.as_ptr(),
                    std::ptr::null(),
                )
            };
        }
        let mut features = TargetMachine::get_host_cpu_features()
            .to_string_lossy()
            .into_owned();
        let mut cpu = TargetMachine::get_host_cpu_name()
            .to_string_lossy()
            .into_owned();
        if cpu == "generic" || cpu.is_empty() {
            // LLVM 14 does not know newer CPUs by name; the feature string
            // still enables everything the CPU has.
            cpu = if features.contains("+avx512f") {
                "x86-64-v4".into()
            } else {
                "x86-64-v3".into()
            };
        }
        // Code for an older instruction set than this CPU's, to test
        // what machines without AVX-512 run (`WARPFOLD_CPU=x86-64-v3`).
        if let Ok(level) = std::env::var("WARPFOLD_CPU") {
            if let Some(capped) = cap_features(&features, &level) {
                features = capped;
                cpu = level;
            } else if level != "native" {
                eprintln!(
                    "warning: WARPFOLD_CPU={level} is not one of native, x86-64-v3, x86-64-v2; using this CPU's features"
                );
            }
        }
        (cpu, features)
    })
}

/// `features` without what the x86-64 microarchitecture `level` lacks:
/// AVX-512 for `x86-64-v3` (AVX2), also AVX/AVX2/FMA for `x86-64-v2`.
fn cap_features(features: &str, level: &str) -> Option<String> {
    let dropped: &[&str] = match level {
        "x86-64-v3" => &["avx512", "amx", "avxvnni"],
        "x86-64-v2" => &[
            "avx512",
            "amx",
            "avxvnni",
            "avx2",
            "avx",
            "fma",
            "f16c",
            "bmi",
            "bmi2",
            "lzcnt",
            "movbe",
            "vaes",
            "vpclmulqdq",
            "gfni",
        ],
        _ => return None,
    };
    let kept = features
        .split(',')
        .map(|f| match f.strip_prefix('+') {
            Some(name) if dropped.iter().any(|d| name.starts_with(d)) => format!("-{name}"),
            _ => f.to_string(),
        })
        .collect::<Vec<_>>();
    Some(kept.join(","))
}

/// Where the machine code of a kernel came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// Compiled now; the disk cache is off.
    Off,
    /// Compiled now and written to the disk cache.
    Stored,
    /// Loaded from the disk cache: no LLVM optimisation or code generation.
    Loaded,
}

/// The source of what turns the generated IR into machine code (the passes
/// and code generation here, `shared_regs`, `warp_pairs`), part of the
/// disk cache key: a change there that leaves the IR as it was must not
/// load objects the old pipeline made (an A/B of two builds read the
/// other's code).
const PIPELINE_SOURCE: [&str; 3] = [
    include_str!("jit.rs"),
    include_str!("shared_regs.rs"),
    include_str!("warp_pairs.rs"),
];

/// Compile `modules` (or load their machine code from the disk cache) and
/// return the address of `wf_cta`, defined in one of them. The JIT holding
/// the code lives as long as the process (compiled kernels are cached in
/// memory too).
pub fn compile(
    modules: &[String],
    helpers: &[(&str, usize)],
    dir: Option<&std::path::Path>,
) -> Result<(CtaFn, CacheUse), Unsupported> {
    let (cpu, features) = host();
    // Code-generation knobs change the machine code, not the IR.
    let knobs = format!(
        "{:?} {:?} {:?}",
        std::env::var("WARPFOLD_CODEGEN_LEVEL").ok(),
        std::env::var("WARPFOLD_LLVM_ARGS").ok(),
        std::env::var("WARPFOLD_SHARED_REGS").ok()
    );
    let keys: Vec<String> = modules
        .iter()
        .map(|ir| {
            let mut parts = vec![cpu.as_bytes(), features.as_bytes(), knobs.as_bytes()];
            parts.extend(PIPELINE_SOURCE.iter().map(|s| s.as_bytes()));
            parts.push(ir.as_bytes());
            crate::disk_cache::key(&parts)
        })
        .collect();
    if let Some(d) = dir {
        let cached: Option<Vec<Vec<u8>>> =
            keys.iter().map(|k| crate::disk_cache::read(d, k)).collect();
        // A stale or damaged entry that still passed the checksum would
        // fail to link; then compile afresh.
        if let Some(Ok(f)) = cached.map(|objs| load_objects(&objs, helpers)) {
            return Ok((f, CacheUse::Loaded));
        }
    }
    let objs = codegen_all(modules)?;
    let used = match dir {
        Some(d)
            if keys
                .iter()
                .zip(&objs)
                .all(|(k, obj)| crate::disk_cache::write(d, k, obj)) =>
        {
            CacheUse::Stored
        }
        _ => CacheUse::Off,
    };
    Ok((load_objects(&objs, helpers)?, used))
}

/// Object files for `modules`, each compiled on a thread of its own (with
/// a context of its own: LLVM contexts are not shared between threads).
fn codegen_all(modules: &[String]) -> Result<Vec<Vec<u8>>, Unsupported> {
    let Some((first, others)) = modules.split_first() else {
        return Err(Unsupported("internal error: no module to compile".into()));
    };
    if !others.is_empty() && std::env::var_os("WARPFOLD_TIME_JIT").is_some() {
        eprintln!("warpfold: {} modules compiled at once", modules.len());
    }
    std::thread::scope(|s| {
        let threads: Vec<_> = others
            .iter()
            .map(|ir| {
                s.spawn(|| {
                    crate::pool::unbind_thread();
                    codegen(ir)
                })
            })
            .collect();
        let mut objs = vec![codegen(first)];
        for t in threads {
            objs.push(t.join().unwrap_or_else(|_| {
                Err(Unsupported("internal error: LLVM's thread failed".into()))
            }));
        }
        objs.into_iter().collect()
    })
}

/// LLVM's code generator level: `WARPFOLD_CODEGEN_LEVEL=0..3`, else the
/// highest. Level 0 (fast register allocation) halves the JIT time of big
/// kernels but makes them 2-4x slower, so it is only a knob.
fn codegen_level() -> OptimizationLevel {
    match std::env::var("WARPFOLD_CODEGEN_LEVEL").ok().as_deref() {
        Some("0") => OptimizationLevel::None,
        Some("1") => OptimizationLevel::Less,
        Some("2") => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    }
}

/// Parse, optimise and generate an object file for this CPU.
fn codegen(ir: &str) -> Result<Vec<u8>, Unsupported> {
    codegen_with(ir, shared_in_registers(ir))
}

/// `codegen`, keeping the shared bytes `[0, regs)` in registers where
/// rounds are unrolled (`None`: not at all).
pub(crate) fn codegen_with(ir: &str, regs: Option<u64>) -> Result<Vec<u8>, Unsupported> {
    let (cpu, features) = host();
    let context = Context::create();
    let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "warpfold");
    let module = context
        .create_module_from_ir(buf)
        .map_err(|e| Unsupported(format!("internal error: bad LLVM IR: {e}")))?;
    let triple = TargetMachine::get_default_triple();
    let target =
        Target::from_triple(&triple).map_err(|e| Unsupported(format!("LLVM: no target: {e}")))?;
    // JITDefault is the large code model on x86-64: the loader may place
    // code, constants and helpers anywhere in the address space.
    let tm = target
        .create_target_machine(
            &triple,
            cpu,
            features,
            codegen_level(),
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| Unsupported("LLVM: no target machine for this CPU".into()))?;
    module.set_triple(&triple);
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    if let Err(e) = module.verify() {
        return Err(Unsupported(format!(
            "internal error: generated LLVM IR is invalid: {}",
            e.to_string_lossy()
        )));
    }
    // Our IR is vector code by construction: it needs promotion to SSA and
    // scalar clean-up, not the loop unroller/vectoriser of -O3 (which is
    // slow on the dispatcher loop and unrolls the per-lane helper loops).
    let t_opt = std::time::Instant::now();
    let fpm: PassManager<inkwell::values::FunctionValue> = PassManager::create(&module);
    fpm.add_scalar_repl_aggregates_pass_ssa();
    fpm.add_promote_memory_to_register_pass();
    fpm.add_instruction_combining_pass();
    fpm.add_cfg_simplification_pass();
    // With MemorySSA, EarlyCSE reuses a warp's state loaded before a
    // branch after it joins, where a side reads memory but writes none (a
    // lane-by-lane load): a 3-D stencil's accesses each reloaded their
    // address and jump lane (2.6% of its instructions).
    fpm.add_early_cse_mem_ssa_pass();
    // A block's loads of one index each test that its lanes do not wrap
    // (`Indexed::consecutive`), on a path of their own that joins again;
    // with the tests made one value above, jump threading takes the path
    // where it held straight past the next ones (a 3-D stencil's trip
    // tested its centre index four times). Single CPU, 4-8 interleaved
    // rounds: sgemm 0.87 of the time, stencil2d 0.88, histogram and SpMV
    // 0.92, bitonic 0.94, stencil3d in cache 0.96; batched LU 1.05,
    // Mandelbrot and transpose 1.01-1.02. JIT median 81 -> 93 ms.
    fpm.add_jump_threading_pass();
    fpm.add_instruction_combining_pass();
    fpm.add_aggressive_dce_pass();
    fpm.add_cfg_simplification_pass();
    fpm.initialize();
    // Warp and region functions are simplified before they are inlined
    // into the CTA round loop (an unrolled round inlines a region once per
    // warp: copies of the simplified function cost far less to process),
    // and the round loop once more after.
    for f in module.get_functions() {
        fpm.run_on(&f);
    }
    let mpm: PassManager<inkwell::module::Module> = PassManager::create(());
    mpm.add_always_inliner_pass();
    mpm.run_on(&module);
    if let Some(f) = module.get_function("wf_cta") {
        fpm.run_on(&f);
        if ir.contains(crate::emit::FRESH_LOOP_MARK) {
            // The first round's loop over the warps (`fresh_loop_blocks`):
            // what every warp computes alike moves out of it. The pass
            // sees the whole function, the kernel's own loops inlined
            // there too (a few ms of JIT).
            let hoist: PassManager<inkwell::values::FunctionValue> = PassManager::create(&module);
            hoist.add_licm_pass();
            hoist.add_instruction_combining_pass();
            hoist.add_cfg_simplification_pass();
            hoist.initialize();
            hoist.run_on(&f);
            hoist.finalize();
        }
        if ir.contains(crate::emit::UNROLLED_MARK) {
            // Unrolled rounds save each warp's registers and status at the
            // end of a region and the next region overwrites them: dead
            // stores, and stores are what those rounds are short of (scan
            // 1.3 -> 1.0 ms, 25-35 ms more passes, less code to generate).
            let late: PassManager<inkwell::values::FunctionValue> = PassManager::create(&module);
            if regs.is_some() {
                // Forward the warps' saved registers from region to region
                // (the shared addresses among them become constants).
                late.add_gvn_pass();
            }
            late.add_dead_store_elimination_pass();
            late.initialize();
            late.run_on(&f);
            late.finalize();
            if let Some(bytes) = regs {
                // SAFETY: `f` belongs to `module`, alive and used by this
                // thread only.
                // The CTA function's running-warps parameter (the driver
                // reads a zero there as the CTA's end).
                let done = f
                    .get_param_iter()
                    .position(|p| p.get_name().to_bytes() == b"runp")
                    .map(|i| i as u32);
                let n = unsafe {
                    crate::shared_regs::promote(
                        f.as_value_ref(),
                        1,
                        crate::emit::env::SHARED as u64,
                        bytes,
                        done,
                    )
                };
                if std::env::var_os("WARPFOLD_TIME_JIT").is_some() {
                    eprintln!("warpfold: {n} shared-memory accesses kept in registers");
                }
                if n > 0 {
                    // With the shared accesses gone, saves of registers
                    // that the next round overwrites are plain dead stores.
                    let again: PassManager<inkwell::values::FunctionValue> =
                        PassManager::create(&module);
                    again.add_dead_store_elimination_pass();
                    // And the shuffles of shuffles the promoted accesses
                    // leave (a tree's last steps read 2 and 1 lanes of a
                    // 16-lane chunk, then widen them: LLVM moved each
                    // lane through a general register) become one.
                    // Single CPU, inputs in cache, 8 rounds: block
                    // reduction 0.93 (5/8 faster), scan 0.96 (7/8); the
                    // scan's JIT time the same.
                    again.add_instruction_combining_pass();
                    again.initialize();
                    again.run_on(&f);
                    again.finalize();
                }
            }
        }
    }
    if let Some(f) = module
        .get_function("wf_cta")
        .filter(|_| ir.contains(crate::warp_pairs::MARK_FN))
    {
        // Last, once nothing moves instructions any more: two warps
        // through a region, interleaved (see `warp_pairs`).
        // SAFETY: `f` belongs to `module`, alive and used by this thread
        // only.
        let n = unsafe { crate::warp_pairs::interleave(f.as_value_ref()) };
        if std::env::var_os("WARPFOLD_TIME_JIT").is_some() {
            eprintln!("warpfold: {n} blocks of two warps interleaved");
        }
        // The interleaving places every value before its uses; should it
        // ever not, the kernel runs on the interpreter instead of
        // reaching code generation with invalid IR.
        if n > 0 && !f.verify(false) {
            return Err(Unsupported(
                "internal error: interleaving two warps left invalid LLVM IR".into(),
            ));
        }
        crate::warp_pairs::INTERLEAVED.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
    fpm.finalize();
    if let Some(path) = std::env::var_os("WARPFOLD_DUMP_OPT") {
        // The optimised module, as the code generator sees it; the first
        // kernel compiled in `FILE`, later ones in `FILE.2`, `FILE.3`...
        static DUMPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = DUMPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut path = path;
        if n > 0 {
            path.push(format!(".{}", n + 1));
        }
        let _ = module.print_to_file(std::path::Path::new(&path));
    }
    let t_cg = std::time::Instant::now();
    let obj = tm
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| Unsupported(format!("LLVM code generation: {e}")))?;
    if std::env::var_os("WARPFOLD_TIME_JIT").is_some() {
        eprintln!(
            "warpfold: LLVM passes {:.1} ms, code generation {:.1} ms",
            (t_cg - t_opt).as_secs_f64() * 1e3,
            t_cg.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(obj.as_slice().to_vec())
}

/// The static shared bytes of a kernel with unrolled rounds, unless
/// `WARPFOLD_SHARED_REGS=off` (see `shared_regs`).
fn shared_in_registers(ir: &str) -> Option<u64> {
    if std::env::var("WARPFOLD_SHARED_REGS").is_ok_and(|v| v == "off") {
        return None;
    }
    let at = ir.find(crate::emit::SHARED_BYTES_MARK)? + crate::emit::SHARED_BYTES_MARK.len();
    let digits: String = ir[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&b| b > 0)
}

fn take_error(e: LLVMErrorRef) -> Result<(), Unsupported> {
    if e.is_null() {
        return Ok(());
    }
    // SAFETY: `e` is an error LLVM handed us; reading its message consumes it.
    let msg = unsafe {
        let m = LLVMGetErrorMessage(e);
        let s = std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        s
    };
    Err(Unsupported(format!("LLVM JIT: {msg}")))
}

/// Link an object file into a fresh ORC JIT: helpers resolve to our
/// functions, anything else (libm) to the process's symbols.
pub(crate) fn load_objects(
    objs: &[Vec<u8>],
    helpers: &[(&str, usize)],
) -> Result<CtaFn, Unsupported> {
    // SAFETY: plain use of LLVM's ORC C API; every object passed on is one
    // LLVM created, ownership moves as the API documents (the builder, the
    // materialisation unit, the generator and the buffer are consumed), and
    // the JIT is leaked on purpose so the code stays mapped.
    unsafe {
        let mut jit: LLVMOrcLLJITRef = std::ptr::null_mut();
        take_error(LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()))?;
        let jd = LLVMOrcLLJITGetMainJITDylib(jit);
        let names: Vec<std::ffi::CString> = helpers
            .iter()
            .map(|(n, _)| std::ffi::CString::new(*n).expect("helper names have no NUL"))
            .collect();
        let mut pairs: Vec<LLVMJITCSymbolMapPair> = names
            .iter()
            .zip(helpers)
            .map(|(n, (_, addr))| LLVMJITCSymbolMapPair {
                Name: LLVMOrcLLJITMangleAndIntern(jit, n.as_ptr()),
                Sym: LLVMJITEvaluatedSymbol {
                    Address: *addr as u64,
                    Flags: LLVMJITSymbolFlags {
                        GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported
                            as u8
                            | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
                        TargetFlags: 0,
                    },
                },
            })
            .collect();
        let mu = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
        take_error(LLVMOrcJITDylibDefine(jd, mu))?;
        let mut gen: LLVMOrcDefinitionGeneratorRef = std::ptr::null_mut();
        take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &mut gen,
            LLVMOrcLLJITGetGlobalPrefix(jit),
            None,
            std::ptr::null_mut(),
        ))?;
        LLVMOrcJITDylibAddGenerator(jd, gen);
        for obj in objs {
            let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                obj.as_ptr() as *const _,
                obj.len(),
                c"warpfold-kernel".as_ptr(),
            );
            take_error(LLVMOrcLLJITAddObjectFile(jit, jd, buf))?;
        }
        let mut addr: u64 = 0;
        take_error(LLVMOrcLLJITLookup(jit, &mut addr, c"wf_cta".as_ptr()))?;
        if addr == 0 {
            return Err(Unsupported("LLVM JIT: wf_cta not found".into()));
        }
        if let Some(path) = std::env::var_os("WARPFOLD_DUMP_CODE") {
            // Raw machine code of the mappings holding the CTA function and
            // the general warp function (of its own module when the kernel
            // was split), for `objdump -b binary`: one file per mapping, the
            // path with the mapping's address added.
            let mut general: u64 = 0;
            // Not an error when absent: inlined into `wf_cta`.
            let _ = take_error(LLVMOrcLLJITLookup(jit, &mut general, c"wf_warp".as_ptr()));
            let mut dumped = Vec::new();
            for (name, at) in [("wf_cta", addr), ("wf_warp", general)] {
                if at == 0 {
                    continue;
                }
                let (lo, hi) = mapping_of(at).unwrap_or((at, at + 4096));
                if !dumped.contains(&lo) {
                    dumped.push(lo);
                    let bytes = std::slice::from_raw_parts(lo as *const u8, (hi - lo) as usize);
                    let mut path = path.clone();
                    path.push(format!(".{lo:x}"));
                    let _ = std::fs::write(&path, bytes);
                }
                eprintln!("warpfold: {name} at {at:#x} (mapped at {lo:#x})");
            }
        }
        // `wf_cta` was generated with exactly this signature.
        Ok(std::mem::transmute::<usize, CtaFn>(addr as usize))
    }
}

/// The start and end of the memory mapping holding `addr` (from
/// `/proc/self/maps`).
fn mapping_of(addr: u64) -> Option<(u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let (lo, hi) = l.split_whitespace().next()?.split_once('-')?;
        let (lo, hi) = (
            u64::from_str_radix(lo, 16).ok()?,
            u64::from_str_radix(hi, 16).ok()?,
        );
        (lo..hi).contains(&addr).then_some((lo, hi))
    })
}

#[cfg(test)]
mod tests {
    use super::cap_features;

    #[test]
    fn capped_features_drop_what_the_level_lacks() {
        let host = "+sse4.2,+avx,+avx2,+fma,+avx512f,+avx512bw,-amx-tile,+bmi2";
        assert_eq!(
            cap_features(host, "x86-64-v3").unwrap(),
            "+sse4.2,+avx,+avx2,+fma,-avx512f,-avx512bw,-amx-tile,+bmi2"
        );
        assert_eq!(
            cap_features(host, "x86-64-v2").unwrap(),
            "+sse4.2,-avx,-avx2,-fma,-avx512f,-avx512bw,-amx-tile,-bmi2"
        );
        assert_eq!(cap_features(host, "native"), None);
    }
}
