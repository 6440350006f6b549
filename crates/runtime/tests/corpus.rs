//! Every corpus kernel, every PTX variant, through the library API: results
//! must match the independently computed expectations.

use warpfold::host::{ArgSpec, HostArray, Prepared};
use warpfold::Device;
use warpfold_corpus::{cases, compare, dims, expectation, Case};

fn run_variant(case: &Case, ptx_path: &std::path::Path, fast: bool, threads: usize) -> Result<(), String> {
    let src = std::fs::read_to_string(ptx_path).map_err(|e| format!("{}: {e}", ptx_path.display()))?;
    for (li, l) in case.file.launches.iter().enumerate() {
        // A fresh device and module per launch: globals start from their initialisers.
        let dev = Device::new().with_threads(threads).with_timeout(Some(std::time::Duration::from_secs(120)));
        let module = dev.load_ptx_named(&src, &ptx_path.display().to_string()).map_err(|e| e.to_string())?;
        let kernel = module.kernel(&l.kernel).map_err(|e| e.to_string())?;
        let prepared: Vec<Prepared> = l
            .args
            .iter()
            .map(|s| ArgSpec::parse(s).map_err(|e| e.to_string())?.prepare(&dev, &case.dir).map_err(|e| e.to_string()))
            .collect::<Result<_, String>>()?;
        let args: Vec<_> = prepared.iter().map(|p| p.as_arg()).collect();
        let result = kernel.launch(dims(&l.grid), dims(&l.block), l.shared_bytes, &args);
        match (&l.expect_error, result) {
            (Some(want), Err(e)) => {
                if !e.to_string().to_lowercase().contains(&want.to_lowercase()) {
                    return Err(format!("launch {li}: expected an error containing `{want}`, got: {e}"));
                }
                continue;
            }
            (Some(want), Ok(_)) => return Err(format!("launch {li}: expected an error containing `{want}`, the launch succeeded")),
            (None, Err(e)) => return Err(format!("launch {li}: {e}")),
            (None, Ok(_)) => {}
        }
        for c in &l.checks {
            let Some(Prepared::Buffer { buffer, dtype, shape, .. }) = prepared.get(c.arg) else {
                return Err(format!("check of arg {} which is not a buffer", c.arg));
            };
            let got = HostArray { dtype: *dtype, shape: shape.clone(), bytes: buffer.to_bytes() };
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
            if let Err(e) = run_variant(case, &path, fast, 0) {
                failures.push(format!("{}/{label}: {e}", case.name));
            }
        }
    }
    // Thread count must not change results: run the non-fast sm80 variants on one worker too.
    for case in &all {
        if let Some((label, path, fast)) = case.variants().into_iter().rev().find(|v| !v.2) {
            runs += 1;
            if let Err(e) = run_variant(case, &path, fast, 1) {
                failures.push(format!("{}/{label} (1 thread): {e}", case.name));
            }
        }
    }
    eprintln!("{} corpus runs, {} failed", runs, failures.len());
    assert!(failures.is_empty(), "corpus failures:\n{}", failures.join("\n"));
}
