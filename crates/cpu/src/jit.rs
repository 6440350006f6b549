//! LLVM: parse the generated IR, optimise it, JIT it for this CPU.

use crate::prepare::Unsupported;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::passes::PassManager;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;
use std::sync::OnceLock;

/// `fn(state, env, warp) -> status`
pub type WarpFn = unsafe extern "C" fn(*mut u8, *const u64, u32) -> u32;

/// Host CPU name and feature string for code generation.
pub fn host() -> &'static (String, String) {
    static HOST: OnceLock<(String, String)> = OnceLock::new();
    HOST.get_or_init(|| {
        let _ = Target::initialize_native(&InitializationConfig::default());
        let features = TargetMachine::get_host_cpu_features()
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
        (cpu, features)
    })
}

/// Compile `ir` and return the address of `wf_warp`. The LLVM context and
/// engine live as long as the process (compiled kernels are cached).
pub fn compile(ir: &str, helpers: &[(&str, usize)]) -> Result<WarpFn, Unsupported> {
    Target::initialize_native(&InitializationConfig::default())
        .map_err(|e| Unsupported(format!("LLVM: {e}")))?;
    let ctx: &'static Context = Box::leak(Box::new(Context::create()));
    let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "warpfold-kernel");
    let module = ctx.create_module_from_ir(buf).map_err(|e| {
        Unsupported(format!(
            "internal error: generated LLVM IR does not parse: {}",
            e.to_string_lossy()
        ))
    })?;
    let triple = TargetMachine::get_default_triple();
    let target =
        Target::from_triple(&triple).map_err(|e| Unsupported(format!("LLVM target: {e}")))?;
    let (cpu, features) = host();
    let tm = target
        .create_target_machine(
            &triple,
            cpu,
            features,
            OptimizationLevel::Aggressive,
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
    let fpm: PassManager<inkwell::values::FunctionValue> = PassManager::create(&module);
    fpm.add_scalar_repl_aggregates_pass_ssa();
    fpm.add_promote_memory_to_register_pass();
    fpm.add_instruction_combining_pass();
    fpm.add_cfg_simplification_pass();
    fpm.add_early_cse_pass();
    fpm.add_instruction_combining_pass();
    fpm.add_aggressive_dce_pass();
    fpm.add_cfg_simplification_pass();
    fpm.initialize();
    for f in module.get_functions() {
        fpm.run_on(&f);
    }
    fpm.finalize();
    if let Some(path) = std::env::var_os("WARPFOLD_DUMP_OPT") {
        // The optimised module, as the code generator sees it.
        let _ = module.print_to_file(std::path::Path::new(&path));
    }
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| Unsupported(format!("LLVM JIT: {}", e.to_string_lossy())))?;
    for (name, addr) in helpers {
        if let Some(f) = module.get_function(name) {
            ee.add_global_mapping(&f, *addr);
        }
    }
    let addr = ee
        .get_function_address("wf_warp")
        .map_err(|e| Unsupported(format!("LLVM JIT: {e:?}")))?;
    if let Some(path) = std::env::var_os("WARPFOLD_DUMP_CODE") {
        // Raw machine code of the warp function, for `objdump -b binary`.
        // SAFETY: reading 16 KiB at the start of freshly emitted code; the
        // JIT's code section is at least that large for any kernel here.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, 16384) };
        let _ = std::fs::write(path, bytes);
        eprintln!("warpfold: wf_warp at {addr:#x}");
    }
    // The engine owns the code: keep it alive with the context.
    std::mem::forget(ee);
    // SAFETY: `wf_warp` was generated with exactly this signature.
    Ok(unsafe { std::mem::transmute::<usize, WarpFn>(addr) })
}
