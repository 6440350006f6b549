#!/usr/bin/env python3
"""Static sanity check of the corpus: case.toml parses, PTX files exist, kernel exists in the PTX
with the right number of params, checked buffers match expected dtype/length."""
import os, re, sys, tomllib
import numpy as np
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
DT = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
bad = 0
for c in sorted(os.listdir(CORPUS)):
    d = os.path.join(CORPUS, c)
    if not os.path.isdir(d): continue
    def err(m):
        global bad; bad += 1; print(f"{c}: {m}")
    cfg = tomllib.load(open(os.path.join(d, "case.toml"), "rb"))
    archs = cfg.get("archs", ["70", "80"])
    for a in archs:
        for f in ("", ".fast"):
            p = os.path.join(d, f"kernel.sm{a}{f}.ptx")
            if not os.path.exists(p): err(f"missing {p}")
    ptx = open(os.path.join(d, f"kernel.sm{archs[-1]}.ptx")).read()
    for L in cfg["case"]:
        m = re.search(r"\.entry\s+%s\s*\((.*?)\)" % re.escape(L["kernel"]), ptx, re.S)
        if not m: err(f"kernel {L['kernel']} not in PTX"); continue
        nparams = len(re.findall(r"\.param\b", m.group(1)))
        if nparams != len(L["args"]): err(f"{L['kernel']}: {nparams} params, {len(L['args'])} args")
        for a in L["args"]:
            if a.startswith("@") and not os.path.exists(os.path.join(d, a[1:])): err(f"missing {a}")
            if a.startswith("raw:") and not os.path.exists(os.path.join(d, a[4:])): err(f"missing {a}")
        if "expect_error" not in L and not L.get("check"): err("no checks")
        for ch in L.get("check", []):
            spec = L["args"][ch["arg"]]
            e = np.load(os.path.join(d, ch["expected"]))
            if spec.startswith("zeros:"):
                _, dt, n = spec.split(":"); dt, n = np.dtype(DT[dt]), int(n)
            elif spec.startswith("@"):
                i = np.load(os.path.join(d, spec[1:])); dt, n = i.dtype, i.size
            else:
                err(f"check on non-buffer arg {spec}"); continue
            if e.dtype != dt or e.size != n: err(f"check arg {ch['arg']}: expected {e.dtype}[{e.size}] vs buffer {dt}[{n}]")
            for k in ("tolerance", "fast_tolerance"):
                if k in ch and not re.fullmatch(r"exact|ulps:\d+|rel:[0-9.e+-]+|abs:[0-9.e+-]+", ch[k]): err(f"bad {k} {ch[k]}")
print("problems:", bad)
sys.exit(1 if bad else 0)
