//! Every corpus kernel, every PTX variant, through the library API: results
//! must match the independently computed expectations.

use warpfold::host::{ArgSpec, HostArray, Prepared};
use warpfold::{Backend, Device};
use warpfold_corpus::{cases, compare, dims, expectation, Case};

fn run_variant(
    case: &Case,
    ptx_path: &std::path::Path,
    fast: bool,
    threads: usize,
    backend: Backend,
) -> Result<(), String> {
    let src =
        std::fs::read_to_string(ptx_path).map_err(|e| format!("{}: {e}", ptx_path.display()))?;
    for (li, l) in case.file.launches.iter().enumerate() {
        // A fresh device and module per launch: globals start from their initialisers.
        let dev = Device::new()
            .with_threads(threads)
            .with_timeout(Some(std::time::Duration::from_secs(120)))
            .with_backend(backend);
        let module = dev
            .load_ptx_named(&src, &ptx_path.display().to_string())
            .map_err(|e| e.to_string())?;
        let kernel = module.kernel(&l.kernel).map_err(|e| e.to_string())?;
        let prepared: Vec<Prepared> = l
            .args
            .iter()
            .map(|s| {
                ArgSpec::parse(s)
                    .map_err(|e| e.to_string())?
                    .prepare(&dev, &case.dir)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_, String>>()?;
        let args: Vec<_> = prepared.iter().map(|p| p.as_arg()).collect();
        let result = kernel.launch(dims(&l.grid), dims(&l.block), l.shared_bytes, &args);
        match (&l.expect_error, result) {
            (Some(want), Err(e)) => {
                if !e.to_string().to_lowercase().contains(&want.to_lowercase()) {
                    return Err(format!(
                        "launch {li}: expected an error containing `{want}`, got: {e}"
                    ));
                }
                continue;
            }
            (Some(want), Ok(_)) => {
                return Err(format!(
                    "launch {li}: expected an error containing `{want}`, the launch succeeded"
                ))
            }
            (None, Err(e)) => return Err(format!("launch {li}: {e}")),
            (None, Ok(_)) => {}
        }
        for c in &l.checks {
            let Some(Prepared::Buffer {
                buffer,
                dtype,
                shape,
                ..
            }) = prepared.get(c.arg)
            else {
                return Err(format!("check of arg {} which is not a buffer", c.arg));
            };
            let got = HostArray {
                dtype: *dtype,
                shape: shape.clone(),
                bytes: buffer.to_bytes(),
            };
            let (want, tol) = expectation(case, c, fast)?;
            compare(&got, &want, tol).map_err(|e| format!("launch {li} arg {}: {e}", c.arg))?;
        }
    }
    Ok(())
}

#[test]
fn corpus_through_library() {
    let all = cases();
    if std::env::var_os("WARPFOLD_CORPUS_FILTER").is_none() {
        assert!(all.len() >= 40, "corpus has only {} cases", all.len());
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in &all {
        for (label, path, fast) in case.variants() {
            runs += 1;
            if let Err(e) = run_variant(case, &path, fast, 0, Backend::Interp) {
                failures.push(format!("{}/{label}: {e}", case.name));
            }
        }
    }
    // Thread count must not change results: run the non-fast sm80 variants on one worker too.
    for case in &all {
        if let Some((label, path, fast)) = case.variants().into_iter().rev().find(|v| !v.2) {
            runs += 1;
            if let Err(e) = run_variant(case, &path, fast, 1, Backend::Interp) {
                failures.push(format!("{}/{label} (1 thread): {e}", case.name));
            }
        }
    }
    eprintln!("{} corpus runs, {} failed", runs, failures.len());
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
}

/// The compiled backend on every corpus kernel: the same expectations as
/// the interpreter (kernels it cannot compile yet fall back, and are
/// listed), with all cores and with one.
#[test]
fn corpus_through_cpu_backend() {
    let mut failures = Vec::new();
    let mut fallbacks = Vec::new();
    let mut runs = 0;
    for case in &cases() {
        if let Some((_, path, _)) = case.variants().first() {
            let src = std::fs::read_to_string(path).unwrap();
            let dev = Device::new().with_backend(Backend::Cpu);
            let m = dev.load_ptx(&src).unwrap();
            for l in &case.file.launches {
                if let (Backend::Interp, Some(why)) = m
                    .kernel(&l.kernel)
                    .unwrap()
                    .effective_backend(dims(&l.block))
                {
                    // Unsupported features may fall back; a backend bug may not.
                    if why.contains("internal error") {
                        failures.push(format!("{}/{}: {why}", case.name, l.kernel));
                    }
                    fallbacks.push(format!("{}/{}: {why}", case.name, l.kernel));
                }
            }
        }
        // Memory checks are the interpreter's job; compiled code runs unchecked.
        if case.file.launches.iter().any(|l| {
            l.expect_error
                .as_deref()
                .is_some_and(|e| e.contains("out of bounds"))
        }) {
            continue;
        }
        for (label, path, fast) in case.variants() {
            for threads in [0, 1] {
                if threads == 1 && label.contains("sm70") {
                    continue;
                }
                runs += 1;
                if let Err(e) = run_variant(case, &path, fast, threads, Backend::Cpu) {
                    failures.push(format!("{}/{label} ({threads} threads): {e}", case.name));
                }
            }
        }
    }
    fallbacks.sort();
    fallbacks.dedup();
    eprintln!(
        "{runs} cpu-backend corpus runs, {} failed; {} kernels fall back to the interpreter:\n{}",
        failures.len(),
        fallbacks.len(),
        fallbacks.join("\n")
    );
    assert!(
        failures.is_empty(),
        "cpu backend corpus failures:\n{}",
        failures.join("\n")
    );
}
