//! `warpfold`: run and inspect PTX/CUDA kernels on the CPU.

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use warpfold::host::{write_npy, ArgSpec, HostArray, Prepared};
use warpfold::{nvrtc, Backend, Device, Module};

#[derive(Parser)]
#[command(
    name = "warpfold",
    version,
    about = "Run GPU kernels (PTX or CUDA) on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a kernel and write its buffer arguments to DIR/arg{i}.npy.
    Run(RunArgs),
    /// List the kernels of a module, or print its IR.
    Inspect(InspectArgs),
    /// Run the benchmark suite against POCL and gcc OpenMP.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Only benchmarks whose name contains this.
    filter: Option<String>,
    /// The suite's directory.
    #[arg(long, default_value = "bench")]
    dir: PathBuf,
    /// Timed launches per implementation (after one warm-up).
    #[arg(long, default_value_t = 10)]
    reps: u32,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Skip the POCL (OpenCL) peer.
    #[arg(long)]
    no_pocl: bool,
}

#[derive(Args)]
struct Source {
    /// A .ptx file, or a .cu file (compiled with NVRTC).
    file: PathBuf,
    /// Virtual architecture for .cu input (compute_XY).
    #[arg(long, default_value_t = 80)]
    arch: u32,
    /// Compile .cu input with --use_fast_math.
    #[arg(long)]
    fast_math: bool,
    /// Fuse a `mul` and the `add`/`sub` reading it into one `fma` where
    /// the PTX gives them no rounding modifier, as ptxas does by default
    /// (`--fmad false`: round each on its own, and compile .cu input with
    /// `--fmad=false`). The default is on unless WARPFOLD_FMAD=off.
    #[arg(long, value_name = "BOOL")]
    fmad: Option<bool>,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    source: Source,
    /// Kernel to run (its PTX name, or the plain name of a C++ kernel).
    #[arg(long)]
    kernel: String,
    /// Grid size X[,Y[,Z]].
    #[arg(long, allow_hyphen_values = true)]
    grid: String,
    /// Block size X[,Y[,Z]].
    #[arg(long, allow_hyphen_values = true)]
    block: String,
    /// Kernel argument, in parameter order: TYPE=VALUE | @PATH.npy | zeros:DTYPE:COUNT | raw:PATH.
    #[arg(long = "arg", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Dynamic shared memory bytes.
    #[arg(long, default_value_t = 0)]
    shared_bytes: u32,
    /// Where buffer arguments are written after the run.
    #[arg(long, default_value = "warpfold-out")]
    out: PathBuf,
    /// Time N launches (after one warm-up); buffers are reset to their
    /// inputs before each, so outputs are those of one launch.
    #[arg(long, default_value_t = 1)]
    reps: u32,
    /// Print a JSON summary as the last line.
    #[arg(long)]
    json: bool,
    /// Execution engine: cpu (compiled SIMD code, the default) or interp
    /// (the reference interpreter, which checks every memory access).
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Stop the kernel after this many seconds.
    #[arg(long, allow_hyphen_values = true)]
    timeout: Option<f64>,
    /// Also run once on the interpreter: print its time next to this
    /// backend's and check that both give identical outputs.
    #[arg(long)]
    compare: bool,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Lanes per warp in compiled code where the kernel allows (kernels
    /// that use shuffles, votes, lane ids, volatile memory, ordered
    /// atomics or printf keep 32); default: chosen per kernel and CPU.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["8", "16", "32"]))]
    warp_width: Option<String>,
}

#[derive(Args)]
struct InspectArgs {
    #[command(flatten)]
    source: Source,
    /// What to print: `kernels` (default), `ir`, or `ptx` (the PTX NVRTC makes of a .cu file).
    #[arg(long, default_value = "kernels")]
    emit: String,
}

/// Standard output that its reader may close early (`warpfold run ... |
/// head -1`): what nobody reads is dropped and the command still does its
/// work (its output files), where `print!` would panic on the closed pipe.
/// Any other failure to write ends the command with an error.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        wrote(write!(std::io::stdout(), $($arg)*));
    }};
}

/// `out!` with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        wrote(writeln!(std::io::stdout(), $($arg)*));
    }};
}

/// The outcome of a write to standard output (see `out!`).
fn wrote(r: std::io::Result<()>) {
    if let Err(e) = r {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: writing the output: {e}");
            std::process::exit(1);
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Launching thread and workers each on a CPU of their own (see
    // `warpfold::bind_threads`): by default for `bench`, where one process
    // has the machine; WARPFOLD_BIND=on|off says for every command.
    let bind = match std::env::var("WARPFOLD_BIND").as_deref() {
        Ok("on") => true,
        Ok("off") => false,
        _ => matches!(cli.command, Command::Bench(_)),
    };
    if bind {
        warpfold::bind_threads();
    }
    let result = match cli.command {
        Command::Run(a) => run(a),
        Command::Inspect(a) => inspect(a),
        Command::Bench(a) => bench(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

type Res<T> = Result<T, String>;

/// The text of a source file.
fn read_source(s: &Source) -> Res<String> {
    let text =
        std::fs::read(&s.file).map_err(|e| format!("cannot read {}: {e}", s.file.display()))?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

fn is_cuda(s: &Source) -> bool {
    s.file.extension().is_some_and(|e| e == "cu")
}

/// NVRTC's options for a .cu source (`--fmad` is the device's to add).
fn nvrtc_options(s: &Source) -> nvrtc::Options {
    nvrtc::Options {
        arch: s.arch,
        fast_math: s.fast_math,
        extra: Vec::new(),
    }
}

/// The PTX text of a source file (compiled with NVRTC when it is CUDA).
fn ptx_text(s: &Source) -> Res<String> {
    let text = read_source(s)?;
    if is_cuda(s) {
        let mut opts = nvrtc_options(s);
        if !s.fmad.unwrap_or_else(warpfold::fmad_from_env) {
            opts.extra.push("--fmad=false".into());
        }
        return nvrtc::compile(&text, &s.file.display().to_string(), &opts)
            .map_err(|e| e.to_string());
    }
    Ok(text)
}

fn load(dev: &Device, s: &Source) -> Res<(Module, f64)> {
    let dev = &match s.fmad {
        Some(on) => dev.clone().with_fmad(on),
        None => dev.clone(),
    };
    let text = read_source(s)?;
    let name = s.file.display().to_string();
    let t0 = Instant::now();
    let module = if is_cuda(s) {
        dev.load_cuda(&text, &name, &nvrtc_options(s))
            .map(|(m, _)| m)
    } else {
        dev.load_ptx_named(&text, &name)
    }
    .map_err(|e| e.to_string())?;
    Ok((module, t0.elapsed().as_secs_f64() * 1e3))
}

fn dims(s: &str, what: &str) -> Res<[u32; 3]> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} takes X[,Y[,Z]], got `{s}`"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .parse()
            .map_err(|_| format!("--{what}: `{p}` is not a positive integer"))?;
        if d[i] == 0 {
            return Err(format!("--{what}: dimensions must be at least 1"));
        }
    }
    Ok(d)
}

fn run(a: RunArgs) -> Res<()> {
    let backend: Backend = a
        .backend
        .parse()
        .map_err(|e: warpfold::Error| e.to_string())?;
    let timeout = match a.timeout {
        Some(t) => match Duration::try_from_secs_f64(t) {
            Ok(d) if t > 0.0 => Some(d.min(Duration::from_secs(100 * 365 * 86400))),
            _ => {
                return Err(format!(
                    "--timeout must be a positive number of seconds, got {t}"
                ))
            }
        },
        None => None,
    };
    let grid = dims(&a.grid, "grid")?;
    let block = dims(&a.block, "block")?;
    let specs: Vec<ArgSpec> = a
        .args
        .iter()
        .enumerate()
        .map(|(i, s)| ArgSpec::parse(s).map_err(|e| format!("--arg {i} (`{s}`): {e}")))
        .collect::<Res<_>>()?;
    let dev = Device::new()
        .with_threads(a.threads)
        .with_timeout(timeout)
        .with_backend(backend)
        .with_warp_width(a.warp_width.as_deref().and_then(|w| w.parse().ok()));
    let (module, compile_ms) = load(&dev, &a.source)?;
    let kernel = module.kernel(&a.kernel).map_err(|e| e.to_string())?;
    let t_jit = Instant::now();
    let (used, why) = kernel.effective_backend_for(block, grid);
    let compile_ms = compile_ms
        + if used == Backend::Cpu {
            t_jit.elapsed().as_secs_f64() * 1e3
        } else {
            0.0
        };
    let from_disk = used == Backend::Cpu
        && matches!(&*kernel.compiled_for(block, grid), Ok(k) if k.cache == warpfold::CacheUse::Loaded);
    // Narrower warps than the GPU's are worth saying (see `Device::with_warp_width`).
    let warp_lanes = kernel.warp_lanes_for(block, grid);
    if let Some(why) = why {
        eprintln!("warning: kernel `{}` runs on the interpreter: the cpu backend does not support {why} yet", kernel.name());
    }
    let cwd = Path::new(".");
    let prepared: Vec<Prepared> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| s.prepare(&dev, cwd).map_err(|e| format!("--arg {i}: {e}")))
        .collect::<Res<_>>()?;
    let launch_args: Vec<warpfold::Arg> = prepared.iter().map(|p| p.as_arg()).collect();
    // Check the arguments against the kernel before anything runs.
    let params = kernel.pack_args(&launch_args).map_err(|e| e.to_string())?;
    drop(launch_args);
    let reps = a.reps.max(1);
    let launches = if a.reps > 1 { reps + 1 } else { 1 };
    let mut times = Vec::new();
    for i in 0..launches {
        for p in &prepared {
            p.reset().map_err(|e| e.to_string())?;
        }
        let t0 = Instant::now();
        kernel
            .launch_packed(grid, block, a.shared_bytes, &params)
            .map_err(|e| e.to_string())?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        if a.reps <= 1 || i > 0 {
            times.push(ms);
        }
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let min = sorted[0];

    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let mut outputs = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        if let Prepared::Buffer {
            buffer,
            dtype,
            shape,
            ..
        } = p
        {
            let arr = HostArray {
                dtype: *dtype,
                shape: shape.clone(),
                bytes: buffer.to_bytes(),
            };
            let path = a.out.join(format!("arg{i}.npy"));
            write_npy(&path, &arr).map_err(|e| e.to_string())?;
            outputs.push((i, path, arr));
        }
    }
    let backend_name = used.name();
    outln!(
        "{}: grid ({},{},{}) x block ({},{},{}) on {backend_name}: {} launch{}, median {median:.3} ms, min {min:.3} ms (load and compile {compile_ms:.1} ms{}{})",
        kernel.name(),
        grid[0],
        grid[1],
        grid[2],
        block[0],
        block[1],
        block[2],
        times.len(),
        if times.len() == 1 { "" } else { "es" },
        match warp_lanes {
            Some(w) if w != 32 => format!(", warps of {w} lanes"),
            _ => String::new(),
        },
        if from_disk {
            ", machine code from the disk cache"
        } else {
            ""
        }
    );
    for (i, path, arr) in &outputs {
        let n = arr.len();
        let shown: Vec<String> = (0..n.min(8))
            .map(|k| arr.dtype.format(&arr.bytes, k))
            .collect();
        outln!(
            "  arg{i} -> {} ({}{:?}): [{}{}]",
            path.display(),
            arr.dtype.name(),
            arr.shape,
            shown.join(", "),
            if n > 8 { ", ..." } else { "" }
        );
    }
    let mut compare_ms = None;
    if a.compare && used == Backend::Cpu {
        for p in &prepared {
            p.reset().map_err(|e| e.to_string())?;
        }
        let t0 = Instant::now();
        kernel
            .launch_packed_on(Backend::Interp, grid, block, a.shared_bytes, &params)
            .map_err(|e| format!("on the interpreter: {e}"))?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        compare_ms = Some(ms);
        let mut differ = Vec::new();
        for (i, p) in prepared.iter().enumerate() {
            if let Prepared::Buffer { buffer, .. } = p {
                let cpu_out = outputs
                    .iter()
                    .find(|(j, _, _)| *j == i)
                    .map(|(_, _, arr)| arr.bytes.clone());
                if cpu_out.as_deref() != Some(&buffer.to_bytes()[..]) {
                    differ.push(format!("arg{i}"));
                }
            }
        }
        // Tiny launches can be slower compiled (a vector per warp for a
        // handful of threads): say so rather than "0.7x faster".
        let ratio = ms / median.max(1e-9);
        let speed = if ratio >= 1.0 {
            format!("{ratio:.1}x faster")
        } else {
            format!("{:.1}x slower", 1.0 / ratio.max(1e-9))
        };
        outln!(
            "  interp: {ms:.3} ms for one launch; cpu is {speed}; outputs {}",
            if differ.is_empty() {
                "identical".to_string()
            } else {
                format!("DIFFER in {}", differ.join(", "))
            }
        );
    }
    if a.json {
        let out = serde_json::json!({
            "kernel": kernel.name(),
            "backend": backend_name,
            "grid": grid,
            "block": block,
            "launches": times.len(),
            "median_ms": median,
            "min_ms": min,
            "compile_ms": compile_ms,
            "warp_lanes": warp_lanes,
            "interp_ms": compare_ms,
            "outputs": outputs.iter().map(|(i, p, _)| serde_json::json!({"arg": i, "path": p.display().to_string()})).collect::<Vec<_>>(),
        });
        outln!("{out}");
    }
    Ok(())
}

fn bench(a: BenchArgs) -> Res<()> {
    let opts = warpfold_bench::Options {
        dir: a.dir,
        filter: a.filter,
        reps: a.reps.max(1),
        pocl: !a.no_pocl,
        openmp: true,
    };
    let report = warpfold_bench::run(&opts)?;
    out!("{}", warpfold_bench::table(&report));
    if let Some(p) = a.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(())
}

fn inspect(a: InspectArgs) -> Res<()> {
    if a.emit == "ptx" {
        out!("{}", ptx_text(&a.source)?);
        return Ok(());
    }
    let dev = Device::new();
    let (module, _) = load(&dev, &a.source)?;
    match a.emit.as_str() {
        "ir" => out!("{}", warpfold::ir::print::print_module(module.ir())),
        "kernels" => {
            let ks = module.kernels();
            if ks.is_empty() {
                outln!("no kernels");
            }
            for k in ks {
                outln!("{}", warpfold::display_name(&k.name));
                for (i, p) in k.params.iter().enumerate() {
                    let ty = match p.array {
                        Some(n) => format!(
                            ".b8[{n}] (by-value aggregate, {} bytes; pass raw:FILE)",
                            n * u64::from(p.ty.bytes())
                        ),
                        None => format!(
                            ".{}{}",
                            p.ty,
                            p.ptr_space
                                .map(|s| format!(" .ptr .{s}"))
                                .unwrap_or_default()
                        ),
                    };
                    outln!("  {i}: {} {ty}", p.name);
                }
            }
        }
        other => {
            return Err(format!(
                "--emit `{other}`: expected `kernels`, `ir` or `ptx`"
            ))
        }
    }
    Ok(())
}
