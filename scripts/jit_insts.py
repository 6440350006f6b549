#!/usr/bin/env python3
"""Instructions executed in a kernel's compiled code, counted exactly.

Timings on a shared VM move by up to 1.7x between runs; instruction counts
do not. This runs `warpfold run ARGS...` under valgrind's callgrind with the
compiled code dumped (WARPFOLD_DUMP_CODE), attributes the executed
instructions to the dumped machine code, and prints the total, how many
instructions run how often (a loop body shows as one count per trip), and
the opcode mix of the hottest group. `--list FILE` writes the whole
annotated disassembly (count, address, instruction).

Needs valgrind (apt-get install valgrind) and objdump. Use a small grid:
callgrind runs about 50x slower (LLVM included).

Valgrind shows the program an Intel CPU (CPUID `GenuineIntel`, which LLVM
takes for a Haswell) whatever the host is. On other CPUs the code counted
is therefore the code an Intel Haswell would get: its instruction
scheduling, and the software prefetches warpfold emits on Intel CPUs only.
The script says so when the host is not an Intel one.

  scripts/jit_insts.py -- K.ptx --kernel k --grid 4,16 --block 32,8 \\
      --arg zeros:f32:2097152 ... --reps 3
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def executed(cg_out, base, size):
    """Per address in [base, base + size): instructions executed there.
    Callgrind's --dump-instr lines are `addr line cost` with addresses
    absolute (0x...) or relative to the previous line (+n, -n, *); the
    line after `calls=` holds a call's inclusive cost and is skipped."""
    cost = collections.Counter()
    last, skip = 0, False
    with open(cg_out) as f:
        for line in f:
            if line.startswith("calls="):
                skip = True
                continue
            if not line or line[0] not in "0123456789+-*":
                skip = False
                continue
            parts = line.split()
            a = parts[0]
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a[0] == "+":
                addr = last + int(a[1:])
            elif a[0] == "-":
                addr = last - int(a[1:])
            else:
                addr = last
            last = addr
            if skip:
                skip = False
                continue
            if len(parts) >= 3 and base <= addr < base + size:
                cost[addr] += int(parts[2])
    return cost


def host_vendor():
    """The host's CPU vendor as /proc/cpuinfo gives it (None if unknown)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def disassemble(path, base):
    out = subprocess.run(
        ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", f"--adjust-vma={base:#x}", path],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)", line)
        if m and m.group(2):
            yield int(m.group(1), 16), m.group(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", help="write the annotated disassembly here")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "warpfold"))
    ap.add_argument("run_args", nargs=argparse.REMAINDER, help="-- then `warpfold run` arguments")
    a = ap.parse_args()
    args = [x for x in a.run_args if x != "--"]
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, WARPFOLD_CACHE_DIR="off", WARPFOLD_DUMP_CODE=os.path.join(d, "code"))
        cg = os.path.join(d, "cg.out")
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", "--smc-check=all", "--dump-instr=yes",
             f"--callgrind-out-file={cg}", a.bin, "run", *args, "--out", os.path.join(d, "out")],
            env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"warpfold run failed under valgrind:\n{r.stderr[-2000:]}")
        rows = []
        for name in sorted(os.listdir(d)):
            if not name.startswith("code."):
                continue
            path = os.path.join(d, name)
            base = int(name.split(".")[1], 16)
            cost = executed(cg, base, os.path.getsize(path))
            rows += [(cost.get(addr, 0), addr, text) for addr, text in disassemble(path, base)]
    total = sum(c for c, _, _ in rows)
    vendor = host_vendor()
    if vendor not in (None, "GenuineIntel"):
        print(f"note: this {vendor} CPU is an Intel Haswell under valgrind: the code counted is "
              "what warpfold compiles for that (Intel-only prefetches, Haswell scheduling)")
    print(f"instructions executed in compiled code: {total}")
    groups = collections.Counter(c for c, _, _ in rows if c)
    print("executions  instructions (that many times each)")
    for c, n in sorted(groups.items(), key=lambda x: -x[0] * x[1])[:12]:
        print(f"{c:>10}  {n}")
    if groups:
        hot = max(groups, key=lambda c: c * groups[c])
        mix = collections.Counter(t.split()[0] for c, _, t in rows if c == hot)
        print(f"opcodes of the instructions run {hot} times:")
        print(", ".join(f"{n} {op}" for op, n in mix.most_common(30)))
    if a.list:
        with open(a.list, "w") as f:
            for c, addr, t in rows:
                f.write(f"{c:>10} {addr:x} {t}\n")


if __name__ == "__main__":
    main()
