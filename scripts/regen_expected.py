#!/usr/bin/env python3
"""Run every corpus case's gen.py (cwd = the case directory).

gen.py writes inputs/*.npy (and raw *.bin) and expected/*.npy with numpy,
deterministically (fixed seeds).

usage: scripts/regen_expected.py [CASE ...]
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def main(names):
    cases = sorted(d for d in os.listdir(CORPUS)
                   if os.path.exists(os.path.join(CORPUS, d, "gen.py")))
    if names:
        missing = [n for n in names if n not in cases]
        if missing:
            sys.exit(f"error: unknown case(s): {' '.join(missing)}")
        cases = names
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "scripts") + os.pathsep + env.get("PYTHONPATH", "")
    failed = []
    for c in cases:
        d = os.path.join(CORPUS, c)
        os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(d, "expected"), exist_ok=True)
        r = subprocess.run([sys.executable, "gen.py"], cwd=d, env=env)
        print(f"  {c}: {'ok' if r.returncode == 0 else 'FAILED'}")
        if r.returncode != 0:
            failed.append(c)
    if failed:
        sys.exit(f"gen.py failed for: {' '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
