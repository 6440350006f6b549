//! The `warpfold` command line, end to end: every corpus kernel through
//! `warpfold run`, and the errors people meet (bad arguments, bad files,
//! malformed PTX) as messages with a failing exit code, never a crash.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use warpfold::host::read_npy;
use warpfold_corpus::{cases, compare, corpus_dir, expectation};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warpfold"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpfold-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run a command; it must fail with a message (exit 1 or 2) and no panic.
fn fails_cleanly(cmd: &mut Command, must_contain: &str) -> String {
    let o = cmd.output().expect("runs");
    let t = text(&o);
    assert!(!o.status.success(), "expected failure, got success:\n{t}");
    assert!(!t.contains("panicked"), "panic:\n{t}");
    assert!(
        matches!(o.status.code(), Some(1) | Some(2)),
        "exit code {:?}:\n{t}",
        o.status.code()
    );
    assert!(
        t.to_lowercase().contains(&must_contain.to_lowercase()),
        "message lacks `{must_contain}`:\n{t}"
    );
    t
}

#[test]
fn every_corpus_kernel_through_the_cli() {
    let mut failures = Vec::new();
    let all = cases();
    for case in &all {
        // One variant per case through the CLI (all variants go through the library test).
        let Some((label, ptx, fast)) = case
            .variants()
            .into_iter()
            .find(|v| v.0.contains("sm80"))
            .or_else(|| case.variants().into_iter().next())
        else {
            continue;
        };
        for (li, l) in case.file.launches.iter().enumerate() {
            let out = tmpdir(&format!("{}-{li}", case.name));
            let mut cmd = bin();
            cmd.current_dir(&case.dir)
                .arg("run")
                .arg(&ptx)
                .args(["--kernel", &l.kernel]);
            let dim = |v: &[u32]| {
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            cmd.args([
                "--grid",
                &dim(&l.grid),
                "--block",
                &dim(&l.block),
                "--shared-bytes",
                &l.shared_bytes.to_string(),
            ]);
            for a in &l.args {
                cmd.arg(format!("--arg={a}"));
            }
            cmd.arg("--out")
                .arg(&out)
                .arg("--json")
                .args(["--timeout", "120"]);
            // Memory checks are the interpreter's; everything else runs on
            // the default (compiled) backend.
            if l.expect_error
                .as_deref()
                .is_some_and(|e| e.contains("out of bounds"))
            {
                cmd.args(["--backend", "interp"]);
            }
            let o = cmd.output().expect("runs");
            let t = text(&o);
            let who = format!("{}/{label} launch {li}", case.name);
            if t.contains("panicked") {
                failures.push(format!("{who}: panic\n{t}"));
                continue;
            }
            if let Some(want) = &l.expect_error {
                if o.status.success() || !t.to_lowercase().contains(&want.to_lowercase()) {
                    failures.push(format!(
                        "{who}: expected an error containing `{want}`:\n{t}"
                    ));
                }
                continue;
            }
            if !o.status.success() {
                failures.push(format!("{who}: failed:\n{t}"));
                continue;
            }
            let last = String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .to_string();
            match serde_json::from_str::<serde_json::Value>(&last) {
                Ok(j) => {
                    for k in [
                        "kernel",
                        "backend",
                        "launches",
                        "median_ms",
                        "min_ms",
                        "compile_ms",
                    ] {
                        if j.get(k).is_none() {
                            failures.push(format!("{who}: --json lacks `{k}`: {last}"));
                        }
                    }
                }
                Err(e) => failures.push(format!("{who}: last line is not JSON ({e}): {last}")),
            }
            for c in &l.checks {
                let got = match read_npy(&out.join(format!("arg{}.npy", c.arg))) {
                    Ok(g) => g,
                    Err(e) => {
                        failures.push(format!("{who}: {e}"));
                        continue;
                    }
                };
                let r =
                    expectation(case, c, fast).and_then(|(want, tol)| compare(&got, &want, tol));
                if let Err(e) = r {
                    failures.push(format!("{who} arg {}: {e}", c.arg));
                }
            }
            let _ = std::fs::remove_dir_all(&out);
        }
    }
    assert!(
        failures.is_empty(),
        "{} CLI corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn saxpy() -> PathBuf {
    corpus_dir().join("saxpy/kernel.sm80.ptx")
}

fn saxpy_dir() -> PathBuf {
    corpus_dir().join("saxpy")
}

/// `warpfold run` of the corpus saxpy on its 3000-element inputs (from
/// its folder), with `extra` arguments and the outputs going to `out`.
fn run_saxpy(extra: &[&str], out: &Path) -> Output {
    bin()
        .current_dir(saxpy_dir())
        .arg("run")
        .arg(saxpy())
        .args([
            "--kernel",
            "saxpy",
            "--grid",
            "4",
            "--block",
            "128",
            "--arg",
            "i32=3000",
            "--arg",
            "f32=1.5",
            "--arg",
            "@inputs/x.npy",
            "--arg",
            "@inputs/y.npy",
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// The JSON object `--json` prints on the last line of standard output.
fn last_json(o: &Output) -> serde_json::Value {
    let last = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"))
}

#[test]
fn inspect_lists_kernels_and_ir() {
    let o = bin().arg("inspect").arg(saxpy()).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("saxpy") && t.contains(".u64"), "{t}");
    let o = bin()
        .arg("inspect")
        .arg(saxpy())
        .args(["--emit", "ir"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        o.status.success() && t.contains("kernel saxpy(") && t.contains("bb0:"),
        "{t}"
    );
}

#[test]
fn output_into_a_reader_that_stops_early_ends_without_a_panic() {
    use std::io::Read;
    // A module whose printed IR outgrows a pipe's buffer (64 KiB), so that
    // it is still being written when the reader goes (`| head -1`).
    let dir = tmpdir("closed-pipe");
    let mut ptx = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry long(.param .u64 p)\n{\n  .reg .u32 %r<3>;\n  mov.u32 %r1, %tid.x;\n",
    );
    for i in 0..4000 {
        ptx.push_str(&format!("  add.u32 %r1, %r1, {i};\n"));
    }
    ptx.push_str("  ret;\n}\n");
    let file = dir.join("long.ptx");
    std::fs::write(&file, ptx).unwrap();
    let mut child = bin()
        .arg("inspect")
        .arg(&file)
        .args(["--emit", "ir"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // (the read end closes here)
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}: {err}", o.status);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn output_that_cannot_be_written_is_an_error() {
    // Linux's /dev/full refuses every write: unlike a closed pipe, that is
    // output lost, so the command fails and says so.
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let o = bin()
        .arg("inspect")
        .arg(saxpy())
        .args(["--emit", "ir"])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writing the output") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn argument_mismatches_are_refused_with_the_signature() {
    let dir = saxpy_dir();
    let run = |args: &[&str]| {
        let mut c = bin();
        c.current_dir(&dir)
            .arg("run")
            .arg(saxpy())
            .args(["--kernel", "saxpy", "--grid", "1", "--block", "32"]);
        for a in args {
            c.arg(format!("--arg={a}"));
        }
        c
    };
    let t = fails_cleanly(&mut run(&["i32=10", "f32=1"]), "takes 4 arguments");
    assert!(t.contains("saxpy("), "the signature is listed: {t}");
    fails_cleanly(
        &mut run(&["f32=10", "f32=1", "@inputs/x.npy", "@inputs/y.npy"]),
        "parameter is .u32",
    );
    // A u64 parameter may be an integer, so this runs and (checked by the
    // interpreter) faults cleanly.
    fails_cleanly(
        run(&["i32=10", "f32=1", "i64=5", "@inputs/y.npy"]).args(["--backend", "interp"]),
        "in kernel `saxpy`, block (0,0,0), thread (0,0,0), PTX line",
    );
    fails_cleanly(
        &mut run(&["i32=10", "f32=1", "@inputs/x.npy", "@nope.npy"]),
        "nope.npy",
    );
    fails_cleanly(
        &mut run(&["i32=zz", "f32=1", "@inputs/x.npy", "@inputs/y.npy"]),
        "not a valid i32",
    );
    fails_cleanly(
        &mut run(&["q=1", "f32=1", "@inputs/x.npy", "@inputs/y.npy"]),
        "unknown scalar type",
    );
    let bad = tmpdir("badnpy").join("bad.npy");
    std::fs::write(&bad, b"\x93NUMPY garbage").unwrap();
    fails_cleanly(
        &mut run(&[
            "i32=10",
            "f32=1",
            &format!("@{}", bad.display()),
            "@inputs/y.npy",
        ]),
        "bad.npy",
    );
    fails_cleanly(
        bin()
            .current_dir(&dir)
            .arg("run")
            .arg(saxpy())
            .args(["--kernel", "nosuch", "--grid", "1", "--block", "1"]),
        "no kernel named `nosuch`",
    );
    fails_cleanly(
        bin()
            .current_dir(&dir)
            .arg("run")
            .arg(saxpy())
            .args(["--kernel", "saxpy", "--grid", "0", "--block", "1"]),
        "at least 1",
    );
    fails_cleanly(
        bin().current_dir(&dir).arg("run").arg(saxpy()).args([
            "--kernel",
            "saxpy",
            "--grid",
            "1",
            "--block",
            "2048",
            "--arg=i32=1",
            "--arg=f32=1",
            "--arg=@inputs/x.npy",
            "--arg=@inputs/y.npy",
        ]),
        "1024",
    );
    fails_cleanly(
        bin().current_dir(&dir).arg("run").arg(saxpy()).args([
            "--kernel",
            "saxpy",
            "--grid",
            "1",
            "--block",
            "1",
            "--backend",
            "gpu",
        ]),
        "known backends",
    );
}

#[test]
fn malformed_ptx_gets_a_located_diagnostic() {
    let d = tmpdir("malformed");
    let cases: &[(&str, &str)] = &[
        (".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  frobnicate.u32 %r1, 1;\n}\n", ":6:3"),
        (".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<2>;\n  add.u32 %r1, %r9, 1;\n}\n", ":7:"),
        (".version 7.0\n.target sm_80\n.visible .entry k(\n", ":"),
        (".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  bra $L_missing;\n}\n", "unknown label"),
    ];
    for (i, (src, want)) in cases.iter().enumerate() {
        let p = d.join(format!("m{i}.ptx"));
        std::fs::write(&p, src).unwrap();
        let t = fails_cleanly(bin().arg("inspect").arg(&p), want);
        assert!(
            t.contains(&format!("m{i}.ptx:")),
            "diagnostic names the file: {t}"
        );
    }
    fails_cleanly(
        bin().arg("inspect").arg(d.join("absent.ptx")),
        "cannot read",
    );
}

#[test]
fn reps_and_outputs() {
    let out = tmpdir("reps");
    let o = run_saxpy(&["--reps", "3", "--json"], &out);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let j = last_json(&o);
    assert_eq!(j["launches"], 3);
    // Buffers are reset before every launch: the output is one saxpy's.
    let got = read_npy(&out.join("arg3.npy")).unwrap();
    let want = read_npy(&saxpy_dir().join("expected/y_3000.npy")).unwrap();
    assert_eq!(got, want);
    assert!(
        out.join("arg2.npy").exists()
            && !out.join("arg0.npy").exists()
            && !out.join("arg1.npy").exists()
    );
}

#[test]
fn cuda_source_without_nvrtc_says_how_to_install() {
    let d = tmpdir("nonvrtc");
    let p = d.join("k.cu");
    std::fs::write(&p, "extern \"C\" __global__ void k(int* a) { a[0] = 1; }\n").unwrap();
    let t = fails_cleanly(
        bin()
            .env("WARPFOLD_NVRTC", Path::new("/nonexistent/libnvrtc.so.12"))
            .arg("inspect")
            .arg(&p),
        "nvrtc",
    );
    assert!(t.contains("pip install nvidia-cuda-nvrtc-cu12"), "{t}");
}

#[test]
fn compare_runs_both_backends_and_checks_outputs() {
    let out = tmpdir("compare");
    let o = run_saxpy(&["--compare", "--json"], &out);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("on cpu") && t.contains("outputs identical"),
        "{t}"
    );
    // The speed as a ratio of at least 1, faster or slower.
    let speed = t
        .split("cpu is ")
        .nth(1)
        .and_then(|r| r.split_once("x "))
        .and_then(|(x, rest)| Some((x.parse::<f64>().ok()?, rest)))
        .unwrap_or_else(|| panic!("no speed ratio in {t}"));
    assert!(
        speed.0 >= 1.0 && (speed.1.starts_with("faster") || speed.1.starts_with("slower")),
        "{t}"
    );
    let j = last_json(&o);
    assert_eq!(j["backend"], "cpu");
    assert!(j["interp_ms"].as_f64().is_some());
}

#[test]
fn warp_width_asks_for_narrow_warps_and_says_so() {
    for (lanes, says) in [("8", true), ("16", true), ("32", false)] {
        let out = tmpdir(&format!("width{lanes}"));
        let o = run_saxpy(&["--compare", "--json", "--warp-width", lanes], &out);
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        assert!(t.contains("outputs identical"), "{t}");
        assert_eq!(t.contains(&format!("warps of {lanes} lanes")), says, "{t}");
        let j = last_json(&o);
        assert_eq!(j["warp_lanes"].to_string(), lanes, "{t}");
    }
    fails_cleanly(
        bin().arg("run").arg(saxpy()).args([
            "--kernel",
            "saxpy",
            "--grid",
            "1",
            "--block",
            "32",
            "--warp-width",
            "12",
        ]),
        "12",
    );
}

/// The benchmark harness end to end on a small suite: one benchmark and
/// one that reuses its sources with another block size (`source`), both
/// checked against the OpenMP version (needs gcc and NVRTC, as the suite).
#[test]
fn bench_runs_a_small_suite_and_checks_results() {
    if std::env::var_os("WARPFOLD_SKIP_NVRTC").is_some() {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let d = tmpdir("bench");
    let copy = |from: &str, to: &str| {
        let (src, dst) = (repo.join("bench").join(from), d.join(to));
        std::fs::create_dir_all(&dst).unwrap();
        for f in std::fs::read_dir(&src).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dst.join(f.file_name().unwrap())).unwrap();
        }
    };
    copy("common", "common");
    copy("triad", "triad");
    // A small triad, and the same sources again with blocks of 16 threads.
    let toml = |block: u32, source: &str| {
        format!(
            "description = \"small triad\"\n{source}kernel = \"triad\"\nn = 4096\nblock = {block}\nargs = [\"buf:f32:4096:zero\", \"buf:f32:4096:ramp\", \"buf:f32:4096:hash\", \"f32:3.0\", \"i32:4096\"]\noutput = 0\nbytes = 49152\nflops = 8192\ntolerance = 1e-5\n"
        )
    };
    std::fs::write(d.join("triad/bench.toml"), toml(256, "")).unwrap();
    std::fs::create_dir_all(d.join("triad16")).unwrap();
    std::fs::write(
        d.join("triad16/bench.toml"),
        toml(16, "source = \"triad\"\n"),
    )
    .unwrap();
    let o = bin()
        .args(["bench", "--no-pocl", "--reps", "2", "--dir"])
        .arg(&d)
        .output()
        .expect("runs");
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for name in ["triad ", "triad16 "] {
        let row = t
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name}row:\n{t}"));
        assert!(row.contains("warpfold=OpenMP"), "{row}");
    }
}
