#!/usr/bin/env python3
"""Where a kernel's compiled code spends its time, by sampling.

`scripts/jit_insts.py` counts executed instructions exactly, but valgrind
does not run AVX-512 code, and on an AVX-512 machine the code under
valgrind is the AVX2 code. This runs `warpfold ARGS...` (a `run` or a
`bench`) under `perf record -e cpu-clock` with the compiled code dumped
(WARPFOLD_DUMP_CODE), attributes the samples to the dumped machine code
and prints the total, the share in compiled code and the hottest
instructions (a load that waits for memory shows as the instruction after
it, or itself). `--list FILE` writes the whole annotated disassembly
(samples, address, instruction).

Samples in compiled code, for the same run twice, compare two builds or
two settings better than times on a busy machine do (the share the rest
of the process takes does not enter them).

Needs perf and objdump.

  scripts/jit_samples.py -- bench histogram --reps 40 --no-pocl
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def disassemble(path, base):
    """(address, text) of each instruction of the raw code at `path`."""
    out = subprocess.run(
        ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", f"--adjust-vma={base:#x}", path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)", line)
        if m and m.group(2):
            yield int(m.group(1), 16), m.group(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "warpfold"))
    ap.add_argument("--list", help="write the annotated disassembly here")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if not args:
        ap.error("give the warpfold arguments after --")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, WARPFOLD_CACHE_DIR="off", WARPFOLD_DUMP_CODE=os.path.join(d, "code"))
        data = os.path.join(d, "perf.data")
        r = subprocess.run(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-o", data, a.bin] + args,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        if r.returncode != 0:
            sys.exit(f"warpfold (under perf) failed with status {r.returncode}")
        ips = collections.Counter()
        script = subprocess.run(["perf", "script", "-i", data, "-F", "ip"], capture_output=True, text=True)
        for word in script.stdout.split():
            try:
                ips[int(word, 16)] += 1
            except ValueError:
                pass
        # Two dumped mappings may be the same one (both functions in it):
        # each address once.
        code = {}
        for name in sorted(os.listdir(d)):
            if name.startswith("code."):
                base = int(name.split(".")[1], 16)
                for addr, text in disassemble(os.path.join(d, name), base):
                    code.setdefault(addr, text)
    total = sum(ips.values())
    rows = sorted((ips.get(addr, 0), addr, text) for addr, text in code.items())
    inside = sum(n for n, _, _ in rows)
    print(f"samples: {total}, in compiled code: {inside} ({100 * inside / max(total, 1):.1f}%)")
    for n, addr, text in sorted(rows, reverse=True)[: a.top]:
        if n:
            print(f"{n:8d} {100 * n / max(inside, 1):5.1f}%  {addr:x}  {text}")
    if a.list:
        with open(a.list, "w") as f:
            for n, addr, text in sorted(rows, key=lambda r: r[1]):
                f.write(f"{n:8d} {addr:x} {text}\n")


if __name__ == "__main__":
    main()
