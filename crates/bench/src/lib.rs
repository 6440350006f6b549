//! The benchmark suite: every benchmark in `bench/` is one algorithm
//! written three ways by us, run in the same process run: CUDA through
//! warpfold, OpenCL C through POCL (a small C host in
//! `bench/common/ocl_host.c`), and C with OpenMP built with
//! `gcc -O3 -march=native -fopenmp`. Each reports the median of repeated
//! launches of the kernel alone (warpfold's JIT time separately), taking
//! turns in rounds (see `ROUNDS`), and warpfold's and POCL's results are
//! checked against OpenMP's, checksum and element by element, before any
//! ratio is shown.

use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use warpfold::{nvrtc, Arg, Backend, Device};

#[derive(Debug, Deserialize)]
struct Def {
    description: String,
    kernel: String,
    n: u64,
    block: u32,
    /// `[width, height, block x, block y]` for 2-D launches.
    grid2d: Option<[u32; 4]>,
    args: Vec<String>,
    output: usize,
    bytes: u64,
    flops: u64,
    tolerance: f64,
    /// `"weighted"`: each output weighted by `i % 16 + 1` (checks order).
    #[serde(default)]
    checksum: Option<String>,
    /// Another benchmark's folder whose three implementations this one
    /// runs with its own launch shape.
    #[serde(default)]
    source: Option<String>,
}

impl Def {
    fn weight(&self, i: usize) -> f64 {
        if self.checksum.as_deref() == Some("weighted") {
            (i % 16 + 1) as f64
        } else {
            1.0
        }
    }
}

/// One implementation's result.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Run {
    pub median_ms: Option<f64>,
    pub checksum: Option<f64>,
    pub error: Option<String>,
    /// The output buffer's elements (of the last round), for the
    /// element-by-element check.
    #[serde(skip)]
    pub output: Option<Vec<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    pub description: String,
    pub warpfold: Run,
    pub backend: String,
    pub jit_ms: f64,
    /// Lanes per warp of warpfold's compiled code (`None`: interpreter).
    pub warp_lanes: Option<u32>,
    pub pocl: Run,
    pub openmp: Run,
    pub bytes: u64,
    pub flops: u64,
    pub checked: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub rows: Vec<Row>,
    pub peak_gbs: Option<f64>,
    pub peak_gflops: Option<f64>,
    pub geomean_vs_pocl: Option<f64>,
    pub geomean_vs_openmp: Option<f64>,
    /// Median microseconds of launching an empty kernel whose code is
    /// already compiled: one CTA, and 64 CTAs spread over all cores.
    pub launch_us: Option<(f64, f64)>,
    /// The median of the JIT times of the kernels the compiled backend ran.
    pub jit_median_ms: Option<f64>,
    /// The CPU model, logical CPUs and `warpfold::code_target()`: tables
    /// from two machines of one kind compare only with this beside them.
    pub machine: String,
}

pub struct Options {
    pub dir: PathBuf,
    pub filter: Option<String>,
    pub reps: u32,
    pub pocl: bool,
    pub openmp: bool,
}

/// `(n, init)` of a buffer spec, the same patterns as `bench/common/init.h`.
fn init(kind: &str, i: u64) -> f32 {
    match kind {
        "ramp" => (i % 1024) as f32 / 1024.0,
        "ones" => 1.0,
        "hash" => (((i as u32).wrapping_mul(2_654_435_761) >> 16) & 1023) as f32 / 1024.0,
        _ => 0.0,
    }
}

fn launch_dims(d: &Def) -> ([u32; 3], [u32; 3]) {
    match d.grid2d {
        Some([w, h, bx, by]) => ([w.div_ceil(bx), h.div_ceil(by), 1], [bx, by, 1]),
        None => ([(d.n as u32).div_ceil(d.block), 1, 1], [d.block, 1, 1]),
    }
}

/// warpfold's run of one benchmark: the result, the backend that ran it,
/// the JIT milliseconds and the compiled code's lanes per warp.
/// Rounds that each side's launches are split into, warpfold, POCL and
/// OpenMP taking turns, so that a slow spell of a shared machine (on the
/// VMs this was tuned on, one kernel's median moved 1.5-2x between runs)
/// falls on all three alike. Each round starts from the inputs, warms up
/// with one launch and times `reps / ROUNDS` more (at least one); a side's
/// time is the median of its rounds' medians.
pub const ROUNDS: u32 = 5;

/// Times each kernel is compiled from its PTX (into a fresh module, no
/// disk cache) for the JIT column, which shows their median: one compile
/// on a shared machine is as noisy as one launch.
pub const JIT_SAMPLES: usize = 3;

/// Timed launches per round for `reps` in all.
fn reps_per_round(reps: u32) -> u32 {
    reps.div_ceil(ROUNDS).max(1)
}

/// The median of `v` (sorted here); `None` when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Warpfold's side: compile, then `ROUNDS` rounds of launches, calling
/// `between` after each (the peers' turns).
fn run_warpfold(
    name: &str,
    dir: &Path,
    d: &Def,
    reps: u32,
    between: &mut dyn FnMut(),
) -> (Run, String, f64, Option<u32>) {
    let fail = |e: String| {
        (
            Run {
                error: Some(e),
                ..Default::default()
            },
            String::new(),
            0.0,
            None,
        )
    };
    let src = match std::fs::read_to_string(dir.join("kernel.cu")) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    // No disk cache: the JIT column is the time to compile from scratch.
    let dev = Device::new()
        .with_backend(Backend::Cpu)
        .with_disk_cache(None);
    let ptx = match dev.load_cuda(
        &src,
        &format!("{name}/kernel.cu"),
        &nvrtc::Options::default(),
    ) {
        Ok((_, ptx)) => ptx,
        Err(e) => return fail(e.to_string()),
    };
    let (grid, block) = launch_dims(d);
    // The PTX loaded and compiled `JIT_SAMPLES` times, each into a module
    // of its own (a module keeps what it compiled); the last one runs.
    let mut jit_samples = Vec::new();
    let mut compiled = None;
    for _ in 0..JIT_SAMPLES {
        let t0 = Instant::now();
        let module = match dev.load_ptx_named(&ptx, &format!("{name}/kernel.cu")) {
            Ok(m) => m,
            Err(e) => return fail(e.to_string()),
        };
        let kernel = match module.kernel(&d.kernel) {
            Ok(k) => k,
            Err(e) => return fail(e.to_string()),
        };
        let (backend, why) = kernel.effective_backend_for(block, grid);
        jit_samples.push(t0.elapsed().as_secs_f64() * 1e3);
        compiled = Some((kernel, backend, why));
    }
    let Some((kernel, backend, why)) = compiled else {
        return fail("no compile".into());
    };
    // Why the compiled backend did not take the kernel, printed under the row.
    let fallback = why
        .filter(|_| backend == Backend::Interp)
        .map(|w| format!("ran on the interpreter: {w}"));
    let jit_ms = median(&mut jit_samples).unwrap_or(0.0);
    let warp_lanes = kernel.warp_lanes_for(block, grid);
    let mut buffers = Vec::new();
    // Each buffer's initial contents, written back at the start of a round
    // (the histogram's bins accumulate over launches, as the peers' do
    // within one process).
    let mut initial: Vec<Vec<u32>> = Vec::new();
    let mut scalars: Vec<Option<Arg>> = Vec::new();
    for spec in &d.args {
        let parts: Vec<&str> = spec.split(':').collect();
        match parts.as_slice() {
            ["buf", ty, n, kind] => {
                let n: u64 = n.parse().unwrap_or(0);
                let words: Vec<u32> = if *ty == "i32" {
                    (0..n)
                        .map(|i| (init(kind, i) * 1024.0) as i32 as u32)
                        .collect()
                } else {
                    (0..n).map(|i| init(kind, i).to_bits()).collect()
                };
                let b = dev.buffer_from(&words);
                initial.push(words);
                match b {
                    Ok(b) => buffers.push((b, *ty == "i32")),
                    Err(e) => return fail(e.to_string()),
                }
                scalars.push(None);
            }
            ["f32", v] => scalars.push(Some(Arg::F32(v.parse().unwrap_or(0.0)))),
            ["i32", v] => scalars.push(Some(Arg::I32(v.parse().unwrap_or(0)))),
            _ => return fail(format!("bad argument spec `{spec}`")),
        }
    }
    let mut bi = 0;
    let mut out_index = 0;
    let args: Vec<Arg> = scalars
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(a) => a,
            None => {
                if i == d.output {
                    out_index = bi;
                }
                bi += 1;
                Arg::Buffer(&buffers[bi - 1].0)
            }
        })
        .collect();
    let mut times = Vec::new();
    let mut round_medians = Vec::new();
    for _ in 0..ROUNDS {
        for ((b, _), words) in buffers.iter().zip(&initial) {
            if let Err(e) = b.write(words) {
                return fail(e.to_string());
            }
        }
        let mut round = Vec::new();
        for r in 0..=reps_per_round(reps) {
            let t = Instant::now();
            if let Err(e) = kernel.launch(grid, block, 0, &args) {
                return fail(e.to_string());
            }
            if r > 0 {
                round.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.extend_from_slice(&round);
        round_medians.extend(median(&mut round));
        between();
    }
    if std::env::var_os("WARPFOLD_BENCH_TIMES").is_some() {
        // Every timed launch in order: drift over a run (caches, page
        // promotion, a busy neighbour) hides behind the median.
        let ms: Vec<String> = times.iter().map(|t| format!("{t:.3}")).collect();
        eprintln!("{name}: launch times (ms): {}", ms.join(" "));
    }
    let (out, is_int) = &buffers[out_index];
    let values = values_of(&out.to_bytes(), *is_int);
    let sum: f64 = values
        .iter()
        .enumerate()
        .map(|(i, &x)| x * d.weight(i))
        .sum();
    (
        Run {
            median_ms: median(&mut round_medians),
            checksum: Some(sum),
            error: fallback,
            output: Some(values),
        },
        backend.name().to_string(),
        jit_ms,
        warp_lanes,
    )
}

/// A peer's rounds as one result: the median of their medians, the last
/// round's checksum (every round starts from the inputs), the first error.
fn combine(rounds: Vec<Run>) -> Run {
    if let Some(e) = rounds.iter().find_map(|r| r.error.clone()) {
        return Run {
            error: Some(e),
            ..Default::default()
        };
    }
    let mut medians: Vec<f64> = rounds.iter().filter_map(|r| r.median_ms).collect();
    Run {
        median_ms: median(&mut medians),
        checksum: rounds.last().and_then(|r| r.checksum),
        error: None,
        output: None,
    }
}

/// The elements a peer wrote to `path` (`WF_DUMP`, see bench/common/init.h).
fn read_dump(path: &Path, is_int: bool) -> Option<Vec<f64>> {
    Some(values_of(&std::fs::read(path).ok()?, is_int))
}

/// An output's bytes as its elements: 32-bit integers or floats.
fn values_of(bytes: &[u8], is_int: bool) -> Vec<f64> {
    let words = bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    if is_int {
        words.map(|w| f64::from(i32::from_le_bytes(w))).collect()
    } else {
        words.map(|w| f64::from(f32::from_le_bytes(w))).collect()
    }
}

/// Where two outputs differ by more than `tol` relative to the reference
/// element, or to the reference's mean magnitude where that is larger
/// (elements near zero): the first such index and its two values, or
/// that their lengths differ. `tol` 0 asks for equality.
fn first_difference(got: &[f64], want: &[f64], tol: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let mean = want.iter().map(|x| x.abs()).sum::<f64>() / want.len().max(1) as f64;
    got.iter()
        .zip(want)
        // (a NaN difference is a difference: hence not `>`)
        .position(|(a, b)| {
            let close = (a - b).abs() <= tol * b.abs().max(mean);
            !close
        })
        .map(|i| format!("[{i}] {} vs {}", got[i], want[i]))
}

/// Parse `median_ms=... checksum=...` from a peer's output.
fn parse_peer(out: std::io::Result<std::process::Output>) -> Run {
    match out {
        Err(e) => Run {
            error: Some(e.to_string()),
            ..Default::default()
        },
        Ok(o) if !o.status.success() => Run {
            error: Some(
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("failed")
                    .to_string(),
            ),
            ..Default::default()
        },
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let get = |k: &str| {
                text.split_whitespace()
                    .find_map(|w| w.strip_prefix(k))
                    .and_then(|v| v.parse().ok())
            };
            Run {
                median_ms: get("median_ms="),
                checksum: get("checksum="),
                error: None,
                output: None,
            }
        }
    }
}

/// A command for a peer's process (or its build) that runs on every CPU
/// the process may use, whatever the launching thread is bound to (see
/// `warpfold::bind_threads`).
fn peer_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    warpfold::unbind_child(&mut cmd);
    cmd
}

fn build(cmd: &mut Command) -> Result<(), String> {
    let o = cmd.output().map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "))
    }
}

fn close(a: Option<f64>, b: Option<f64>, tol: f64) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => (x - y).abs() <= tol * y.abs().max(1e-30),
        _ => false,
    }
}

pub fn run(opts: &Options) -> Result<Report, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(&opts.dir)
        .map_err(|e| format!("{}: {e}", opts.dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("bench.toml").exists())
        .filter(|p| {
            opts.filter.as_deref().is_none_or(|f| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(f))
            })
        })
        .collect();
    names.sort();
    let work = std::env::temp_dir().join(format!("warpfold-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let common = opts.dir.join("common");
    let host = work.join("ocl_host");
    let pocl_ok = opts.pocl
        && build(
            peer_command("gcc")
                .args(["-O2", "-I"])
                .arg(&common)
                .arg(common.join("ocl_host.c"))
                .args(["-lOpenCL", "-o"])
                .arg(&host),
        )
        .is_ok();
    let bar = ProgressBar::new(names.len() as u64 * u64::from(ROUNDS));
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for dir in &names {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(dir.join("bench.toml")).map_err(|e| e.to_string())?;
        let d: Def = toml::from_str(&text).map_err(|e| format!("{name}/bench.toml: {e}"))?;
        // The implementations: this folder's, or those of `source`.
        let dir = &match &d.source {
            Some(src) => opts.dir.join(src),
            None => dir.clone(),
        };
        // The peers, built once; each of their rounds is one process.
        let omp_exe = opts.openmp.then(|| {
            let exe = work.join(format!("omp_{name}"));
            build(
                peer_command("gcc")
                    .args(["-O3", "-march=native", "-fopenmp", "-o"])
                    .arg(&exe)
                    .arg(dir.join("omp.c"))
                    .arg("-lm"),
            )
            .map(|()| exe)
        });
        let per_round = reps_per_round(opts.reps).to_string();
        // Each peer round writes its output here (the last round's stays).
        let (pocl_dump, omp_dump) = (
            work.join(format!("{name}.pocl.out")),
            work.join(format!("{name}.omp.out")),
        );
        let out_is_int = d
            .args
            .get(d.output)
            .is_some_and(|a| a.starts_with("buf:i32"));
        let (mut pocl_rounds, mut omp_rounds) = (Vec::new(), Vec::new());
        let done = std::cell::Cell::new(0u32);
        let mut peer_round = || {
            done.set(done.get() + 1);
            if pocl_ok {
                let (grid, block) = launch_dims(&d);
                let global: Vec<String> =
                    (0..3).map(|i| (grid[i] * block[i]).to_string()).collect();
                let local: Vec<String> = block.iter().map(|b| b.to_string()).collect();
                pocl_rounds.push(parse_peer(
                    peer_command(&host)
                        .env("WF_CHECKSUM", d.checksum.as_deref().unwrap_or("plain"))
                        .env("WF_DUMP", &pocl_dump)
                        .arg(dir.join("kernel.cl"))
                        .arg(&d.kernel)
                        .args(&global)
                        .args(&local)
                        .arg(&per_round)
                        .arg(d.output.to_string())
                        .args(&d.args)
                        .output(),
                ));
            }
            if let Some(Ok(exe)) = &omp_exe {
                omp_rounds.push(parse_peer(
                    peer_command(exe)
                        .env("WF_DUMP", &omp_dump)
                        .arg(d.n.to_string())
                        .arg(&per_round)
                        .output(),
                ));
            }
            bar.inc(1);
        };
        bar.set_message(format!("{name}: warpfold, POCL and OpenMP taking turns"));
        let (wf, backend, jit_ms, warp_lanes) =
            run_warpfold(&name, dir, &d, opts.reps, &mut peer_round);
        // Warpfold stopped early (an error): the peers' remaining rounds.
        while done.get() < ROUNDS {
            peer_round();
        }
        let pocl = if pocl_ok {
            let mut r = combine(pocl_rounds);
            r.output = read_dump(&pocl_dump, out_is_int);
            r
        } else if opts.pocl {
            Run {
                error: Some(
                    "POCL not available (apt-get install pocl-opencl-icd ocl-icd-opencl-dev)"
                        .into(),
                ),
                ..Default::default()
            }
        } else {
            Run::default()
        };
        let openmp = match omp_exe {
            Some(Ok(_)) => {
                let mut r = combine(omp_rounds);
                r.output = read_dump(&omp_dump, out_is_int);
                r
            }
            Some(Err(e)) => Run {
                error: Some(format!("gcc: {e}")),
                ..Default::default()
            },
            None => Run::default(),
        };
        // Same checksum and, where both wrote their output, the same
        // elements (within the tolerance) as the OpenMP version.
        let agrees = |r: &Run, who: &str| -> String {
            if !close(r.checksum, openmp.checksum, d.tolerance) {
                return format!("{who}!=OpenMP");
            }
            match (&r.output, &openmp.output) {
                (Some(got), Some(want)) => match first_difference(got, want, d.tolerance) {
                    Some(at) => format!("{who}!=OpenMP {at}"),
                    None => format!("{who}=OpenMP"),
                },
                _ => format!("{who}=OpenMP (checksum only)"),
            }
        };
        let mut checks = Vec::new();
        if openmp.checksum.is_some() {
            // A run that failed (its error is printed under the row) is
            // not a wrong result.
            checks.push(if wf.checksum.is_none() {
                "warpfold failed".to_string()
            } else {
                agrees(&wf, "warpfold")
            });
            if pocl.checksum.is_some() {
                checks.push(agrees(&pocl, "POCL"));
            }
        }
        // The outputs were only for the check (up to 128 MiB each).
        let (mut wf, mut pocl, mut openmp) = (wf, pocl, openmp);
        for r in [&mut wf, &mut pocl, &mut openmp] {
            r.output = None;
        }
        rows.push(Row {
            name,
            description: d.description,
            warpfold: wf,
            backend,
            jit_ms,
            warp_lanes,
            pocl,
            openmp,
            bytes: d.bytes,
            flops: d.flops,
            checked: checks.join(" "),
        });
    }
    bar.finish_and_clear();
    let _ = std::fs::remove_dir_all(&work);
    // The machine's measured peaks: the OpenMP triad and FMA benchmarks.
    let rate = |r: &Row, per: u64| r.openmp.median_ms.map(|ms| per as f64 / (ms * 1e6));
    let peak_gbs = rows
        .iter()
        .find(|r| r.name == "triad")
        .and_then(|r| rate(r, r.bytes));
    let peak_gflops = rows
        .iter()
        .find(|r| r.name == "fma")
        .and_then(|r| rate(r, r.flops));
    let geo = |f: &dyn Fn(&Row) -> Option<f64>| {
        let v: Vec<f64> = rows.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
    };
    let geomean_vs_pocl = geo(&|r: &Row| Some(r.pocl.median_ms? / r.warpfold.median_ms?));
    let geomean_vs_openmp = geo(&|r: &Row| Some(r.openmp.median_ms? / r.warpfold.median_ms?));
    let jit_median_ms = jit_median(&rows);
    Ok(Report {
        rows,
        peak_gbs,
        peak_gflops,
        geomean_vs_pocl,
        geomean_vs_openmp,
        launch_us: launch_overhead(),
        jit_median_ms,
        machine: machine(),
    })
}

/// The median JIT time of the rows the compiled backend ran (failed rows
/// and those that fell back to the interpreter have none that counts).
fn jit_median(rows: &[Row]) -> Option<f64> {
    let mut jits: Vec<f64> = rows
        .iter()
        .filter(|r| r.backend == "cpu")
        .map(|r| r.jit_ms)
        .collect();
    median(&mut jits)
}

/// `AMD EPYC, 2 CPUs; code for znver3, AVX2, 24 MiB of cache`.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim())
        })
        .unwrap_or("unknown CPU");
    // Counted before any thread was bound to a CPU.
    let cpus = warpfold::cores();
    format!("{model}, {cpus} CPUs; code for {}", warpfold::code_target())
}

/// What a launch of already compiled code costs beyond the kernel's own
/// work: medians over 2000 launches of an empty kernel.
fn launch_overhead() -> Option<(f64, f64)> {
    const EMPTY: &str =
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry nop()\n{\n  ret;\n}\n";
    let dev = Device::new()
        .with_backend(Backend::Cpu)
        .with_disk_cache(None);
    let m = dev.load_ptx(EMPTY).ok()?;
    let k = m.kernel("nop").ok()?;
    let med = |grid: u32| -> Option<f64> {
        let mut t = Vec::new();
        for r in 0..2100 {
            let t0 = Instant::now();
            k.launch([grid, 1, 1], [32, 1, 1], 0, &[]).ok()?;
            if r >= 100 {
                t.push(t0.elapsed().as_secs_f64() * 1e6);
            }
        }
        t.sort_by(f64::total_cmp);
        Some(t[t.len() / 2])
    };
    Some((med(1)?, med(64)?))
}

/// The report as a table for people.
pub fn table(r: &Report) -> String {
    let f = |x: Option<f64>, p: usize| x.map(|v| format!("{v:.p$}")).unwrap_or_else(|| "-".into());
    let mut out = format!(
        "{:<11} {:>10} {:>8} {:>9} {:>7} {:>10} {:>10} {:>8} {:>8} {:>7}  {}\n",
        "benchmark",
        "warpfold",
        "GB/s",
        "GFLOP/s",
        "%peak",
        "POCL",
        "OpenMP",
        "vs POCL",
        "vs OMP",
        "JIT ms",
        "check"
    );
    for row in &r.rows {
        let ms = row.warpfold.median_ms;
        let gbs = ms.map(|m| row.bytes as f64 / (m * 1e6));
        let gfl = ms
            .filter(|_| row.flops > 0)
            .map(|m| row.flops as f64 / (m * 1e6));
        let bw_bound = row.flops == 0 || (row.bytes as f64) * 4.0 > row.flops as f64;
        let pct = if bw_bound {
            gbs.zip(r.peak_gbs).map(|(a, b)| 100.0 * a / b)
        } else {
            gfl.zip(r.peak_gflops).map(|(a, b)| 100.0 * a / b)
        };
        let ratio = |peer: Option<f64>| peer.zip(ms).map(|(p, w)| p / w);
        let _ =
            std::fmt::Write::write_fmt(
                &mut out,
                format_args!(
                "{:<11} {:>8} ms {:>8} {:>9} {:>6}% {:>7} ms {:>7} ms {:>7}x {:>7}x {:>7}  {}{}{}\n",
                row.name,
                f(ms, 3),
                f(gbs, 1),
                f(gfl, 1),
                f(pct, 0),
                f(row.pocl.median_ms, 3),
                f(row.openmp.median_ms, 3),
                f(ratio(row.pocl.median_ms), 2),
                f(ratio(row.openmp.median_ms), 2),
                f(Some(row.jit_ms), 0),
                row.checked,
                if row.backend == "interp" { " (ran on the interpreter)" } else { "" },
                match row.warp_lanes {
                    Some(w) if w != 32 => format!(" ({w}-lane warps)"),
                    _ => String::new(),
                }
            ),
            );
        for (who, run) in [
            ("warpfold", &row.warpfold),
            ("POCL", &row.pocl),
            ("OpenMP", &row.openmp),
        ] {
            if let Some(e) = &run.error {
                let _ = std::fmt::Write::write_fmt(&mut out, format_args!("    {who}: {e}\n"));
            }
        }
    }
    let _ = std::fmt::Write::write_fmt(
        &mut out,
        format_args!(
            "machine peak (OpenMP triad / FMA): {} GB/s, {} GFLOP/s; geometric mean speed-up: {}x vs POCL, {}x vs OpenMP\n",
            f(r.peak_gbs, 1),
            f(r.peak_gflops, 1),
            f(r.geomean_vs_pocl, 2),
            f(r.geomean_vs_openmp, 2)
        ),
    );
    if let Some(jit) = r.jit_median_ms {
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!("JIT compile time, median over the compiled kernels: {jit:.0} ms\n"),
        );
    }
    let _ = std::fmt::Write::write_fmt(&mut out, format_args!("machine: {}\n", r.machine));
    if let Some((one, many)) = r.launch_us {
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "launch of compiled code (empty kernel): {one:.1} us for 1 CTA, {many:.1} us for 64 CTAs on all cores\n"
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{first_difference, jit_median, read_dump, table, Report, Row, Run};

    fn row(backend: &str, jit_ms: f64) -> Row {
        Row {
            name: "k".into(),
            description: String::new(),
            warpfold: Run::default(),
            backend: backend.into(),
            jit_ms,
            warp_lanes: None,
            pocl: Run::default(),
            openmp: Run::default(),
            bytes: 0,
            flops: 0,
            checked: String::new(),
        }
    }

    #[test]
    fn the_jit_median_counts_compiled_kernels_only() {
        // A kernel that fell back to the interpreter spent its time on a
        // compile that failed; a failed row has none.
        let rows = [
            row("cpu", 90.0),
            row("interp", 5000.0),
            row("cpu", 100.0),
            row("interp", 6000.0),
            row("cpu", 300.0),
            row("", 0.0),
        ];
        assert_eq!(jit_median(&rows), Some(100.0));
        let failed_first = [row("", 0.0), row("cpu", 50.0), row("cpu", 60.0)];
        assert_eq!(jit_median(&failed_first), Some(60.0));
        assert_eq!(jit_median(&rows[3..4]), None);
    }

    #[test]
    fn the_table_footer_names_the_jit_median_and_the_machine() {
        let report = Report {
            rows: vec![row("cpu", 87.0)],
            peak_gbs: None,
            peak_gflops: None,
            geomean_vs_pocl: None,
            geomean_vs_openmp: None,
            launch_us: Some((1.0, 3.0)),
            jit_median_ms: Some(87.0),
            machine: "Some CPU, 2 CPUs; code for znver3, AVX2, 24 MiB of cache".into(),
        };
        let t = table(&report);
        let at = |s: &str| t.find(s).unwrap_or_else(|| panic!("no {s:?} in\n{t}"));
        let jit = at("JIT compile time, median over the compiled kernels: 87 ms\n");
        let machine = at("machine: Some CPU, 2 CPUs; code for znver3, AVX2, 24 MiB of cache\n");
        assert!(at("geometric mean") < jit && jit < machine && machine < at("launch of"));
    }

    #[test]
    fn outputs_differ_where_an_element_leaves_the_tolerance() {
        let want = [1.0, 2.0, 0.0, 400.0];
        assert_eq!(first_difference(&want, &want, 0.0), None);
        // Relative to the element: 400 +- 0.04 passes at 1e-4, 400.05 not.
        assert_eq!(
            first_difference(&[1.0, 2.0, 0.0, 400.03], &want, 1e-4),
            None
        );
        assert_eq!(
            first_difference(&[1.0, 2.0, 0.0, 400.05], &want, 1e-4).as_deref(),
            Some("[3] 400.05 vs 400")
        );
        // A small element is judged against the mean magnitude (100.75)
        // where that is larger: 2 + 0.5 is out, 2 + 0.005 in.
        assert!(first_difference(&[1.0, 2.5, 0.0, 400.0], &want, 1e-4).is_some());
        assert_eq!(
            first_difference(&[1.0, 2.005, 0.0, 400.0], &want, 1e-4),
            None
        );
        // Near zero too: 0.005 passes.
        assert_eq!(
            first_difference(&[1.0, 2.0, 0.005, 400.0], &want, 1e-4),
            None
        );
        // Exact for a zero tolerance, a NaN never agrees, lengths must match.
        assert!(first_difference(&[1.0, 2.0, 0.0, 401.0], &want, 0.0).is_some());
        assert!(first_difference(&[f64::NAN, 2.0, 0.0, 400.0], &want, 1.0).is_some());
        assert!(first_difference(&want[..3], &want, 1.0).is_some());
    }

    #[test]
    fn dumps_read_back_as_the_peer_wrote_them() {
        let dir = std::env::temp_dir().join(format!("wf-dump-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ints, floats) = (dir.join("i"), dir.join("f"));
        let i: Vec<u8> = [-3i32, 7].iter().flat_map(|x| x.to_le_bytes()).collect();
        let f: Vec<u8> = [0.5f32, -2.25]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        std::fs::write(&ints, i).unwrap();
        std::fs::write(&floats, f).unwrap();
        assert_eq!(read_dump(&ints, true), Some(vec![-3.0, 7.0]));
        assert_eq!(read_dump(&floats, false), Some(vec![0.5, -2.25]));
        assert_eq!(read_dump(&dir.join("missing"), false), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
