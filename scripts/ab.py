#!/usr/bin/env python3
"""Compare two builds or two settings of warpfold on benchmarks, interleaved.

On a shared VM one kernel's time moves 1.5-2x between runs minutes apart,
so a single run of each side says little. This runs `warpfold bench K
--no-pocl --json F` for side A and side B in turns (A B, then B A, ...), so
a slow spell falls on both, and prints per kernel: each side's median and
minimum over the rounds, B/A of the medians, in how many rounds B was
faster, and each side's median ratio against OpenMP (measured in the same
run as that side, so it carries the machine's state with it).

  scripts/ab.py --a-bin /tmp/old --b-bin target/release/warpfold stencil3d
  scripts/ab.py --b-env WARPFOLD_LOCKSTEP=off --rounds 6 stencil3d histogram

A side's binary defaults to target/release/warpfold; `--a-env`/`--b-env`
(repeatable) set environment variables for that side only. Compiled code is
not cached (WARPFOLD_CACHE_DIR=off), so both sides compile what they run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_env(pairs):
    env = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            sys.exit(f"error: --a-env/--b-env takes KEY=VALUE, not {p!r}")
        env[key] = value
    return env


def run_side(binary, env, kernel, reps, suite=None):
    """(warpfold ms, OpenMP ms or None) of one `bench` run of `kernel`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        full_env = dict(os.environ, WARPFOLD_CACHE_DIR="off", **env)
        cmd = [binary, "bench", kernel, "--reps", str(reps), "--no-pocl", "--json", out]
        if suite:
            # (bench runs in the repository: a path relative to the caller.)
            cmd += ["--dir", os.path.abspath(suite)]
        r = subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            sys.exit(f"error: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
        with open(out) as f:
            report = json.load(f)
    rows = [row for row in report["rows"] if row["name"] == kernel]
    if not rows:
        sys.exit(f"error: no benchmark named exactly {kernel!r} in the report")
    row = rows[0]
    ms = row["warpfold"]["median_ms"]
    if ms is None:
        sys.exit(f"error: warpfold failed on {kernel}: {row['warpfold'].get('error')}")
    return ms, row["openmp"]["median_ms"]


def summary(kernel, a, b):
    """One line for `kernel` from the rounds' (ms, omp) pairs of each side."""
    med = lambda xs: statistics.median(xs)
    a_ms, b_ms = [x for x, _ in a], [x for x, _ in b]
    wins = sum(1 for x, y in zip(a_ms, b_ms) if y < x)
    ratio = lambda side: [omp / ms for ms, omp in side if omp]
    vs = lambda side: f"{med(ratio(side)):.2f}x" if ratio(side) else "-"
    return (
        f"{kernel:<13} {med(a_ms):>8.3f} {min(a_ms):>8.3f}  {med(b_ms):>8.3f} {min(b_ms):>8.3f}"
        f"  {med(b_ms) / med(a_ms):>5.2f}  {wins:>2}/{len(a_ms):<2}  {vs(a):>7} {vs(b):>7}"
    )


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="+", help="benchmark names (exact)")
    default_bin = os.path.join(ROOT, "target", "release", "warpfold")
    ap.add_argument("--a-bin", default=default_bin)
    ap.add_argument("--b-bin", default=default_bin)
    ap.add_argument("--a-env", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--b-env", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--rounds", type=int, default=4, help="turns of each side (default 4)")
    ap.add_argument("--reps", type=int, default=20, help="bench --reps (default 20)")
    ap.add_argument("--dir", help="bench --dir: another suite (say, a copy with smaller inputs that stay in cache)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        sys.exit("error: --rounds must be at least 1")
    sides = [
        (args.a_bin, parse_env(args.a_env)),
        (args.b_bin, parse_env(args.b_env)),
    ]
    if sides[0] == sides[1]:
        print("warning: A and B are the same binary and settings (an A/A run)", file=sys.stderr)
    print(f"A: {sides[0][0]} {sides[0][1]}\nB: {sides[1][0]} {sides[1][1]}")
    print(
        f"{'benchmark':<13} {'A med':>8} {'A min':>8}  {'B med':>8} {'B min':>8}"
        f"  {'B/A':>5}  {'B won':<5}  {'A v OMP':>7} {'B v OMP':>7}"
    )
    for kernel in args.kernels:
        got = ([], [])
        for r in range(args.rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for side in order:
                binary, env = sides[side]
                got[side].append(run_side(binary, env, kernel, args.reps, args.dir))
            print(f"  round {r + 1}/{args.rounds} of {kernel}", end="\r", file=sys.stderr)
        print(summary(kernel, *got))


if __name__ == "__main__":
    main(sys.argv[1:])
