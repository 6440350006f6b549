#!/usr/bin/env python3
"""Write a copy of some benchmarks with inputs small enough to stay in cache.

The suite's inputs (16-64 MiB) measure memory as much as compiled code, and
on a shared VM memory times swing with the neighbours. For a change to the
code generator, the same kernels on inputs that stay in L2/L3, run on one
CPU, compare two builds within a few per cent:

  scripts/cache_suite.py /tmp/cached
  taskset -c 1 scripts/ab.py --dir /tmp/cached --a-bin /tmp/old --rounds 8 \\
      --reps 100 reduce scan warp_reduce

(`taskset` binds warpfold and the OpenMP peer alike.) Each benchmark keeps
its sources; its bench.toml gets the smaller sizes below, which the OpenMP
versions read from their first argument as well.
"""
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> {old text: new text} in bench.toml: 1 Mi elements (4 MiB a
# buffer), the 3-D stencil 16 planes of 128 x 128, SpMV and the histogram
# as noted.
SIZES = {
    "reduce": {
        "n = 16777216": "n = 1048576",
        "buf:f32:16777216:ramp": "buf:f32:1048576:ramp",
        "buf:f32:65536:zero": "buf:f32:4096:zero",
        "i32:16777216": "i32:1048576",
    },
    "warp_reduce": {
        "n = 16777216": "n = 1048576",
        "buf:f32:16777216:hash": "buf:f32:1048576:hash",
        "buf:f32:524288:zero": "buf:f32:32768:zero",
        "i32:16777216": "i32:1048576",
    },
    "scan": {
        "n = 4194304": "n = 1048576",
        "buf:f32:4194304:hash": "buf:f32:1048576:hash",
        "buf:f32:4194304:zero": "buf:f32:1048576:zero",
        "i32:4194304": "i32:1048576",
    },
    "stencil3d": {
        "n = 2097152": "n = 262144",
        "buf:f32:2097152:zero": "buf:f32:262144:zero",
        "buf:f32:2097152:hash": "buf:f32:262144:hash",
        '"i32:128", "i32:128", "i32:128"': '"i32:128", "i32:128", "i32:16"',
    },
    # 64 Ki rows (4 MiB of values).
    "spmv": {
        "n = 1048576": "n = 65536",
        "buf:f32:1048576:zero": "buf:f32:65536:zero",
        "buf:f32:16777216:ramp": "buf:f32:1048576:ramp",
        "buf:f32:1048576:hash": "buf:f32:65536:hash",
        "i32:1048576": "i32:65536",
    },
    # 64 CTAs of 256 threads over 1 Mi elements (each thread's 64 steps).
    "histogram": {
        "n = 262144": "n = 16384",
        "buf:i32:16777216:hash": "buf:i32:1048576:hash",
        "i32:16777216": "i32:1048576",
    },
}


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    bench = os.path.join(ROOT, "bench")
    dst_common = os.path.join(out, "common")
    shutil.rmtree(dst_common, ignore_errors=True)
    shutil.copytree(os.path.join(bench, "common"), dst_common)
    for name, edits in SIZES.items():
        dst = os.path.join(out, name)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(bench, name), dst)
        path = os.path.join(dst, "bench.toml")
        with open(path) as f:
            text = f.read()
        for old, new in edits.items():
            if old not in text:
                sys.exit(f"error: {name}/bench.toml no longer has {old!r}: update SIZES")
            text = text.replace(old, new)
        # The bytes and flops a run counts, for its GB/s and GFLOP/s,
        # shrink with n; the description says which copy this is.
        old_n = int(re.search(r"^n = (\d+)$", open(os.path.join(bench, name, "bench.toml")).read(), re.M).group(1))
        new_n = int(re.search(r"^n = (\d+)$", text, re.M).group(1))
        for key in ("bytes", "flops"):
            text = re.sub(
                rf"^{key} = (\d+)$",
                lambda m: f"{key} = {int(m.group(1)) * new_n // old_n}",
                text,
                flags=re.M,
            )
        text = re.sub(r'^description = "(.*)"$', r'description = "\1 (inputs in cache)"', text, flags=re.M)
        with open(path, "w") as f:
            f.write(text)
    print(f"wrote {', '.join(SIZES)} to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
