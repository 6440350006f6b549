#!/usr/bin/env python3
"""Regenerate the PTX of every corpus case with NVRTC.

For each tests/corpus/<case>/kernel.cu writes
  kernel.sm70.ptx, kernel.sm80.ptx, kernel.sm70.fast.ptx, kernel.sm80.fast.ptx
(only the sm80 pair when the case's case.toml says archs = ["80"]).

libnvrtc is found via $WARPFOLD_NVRTC (path to libnvrtc.so*), else the pip
package nvidia-cuda-nvrtc-cu12.

usage: scripts/regen_ptx.py [--check] [CASE ...]
  --check   also run ptxas (if found) on every generated file
"""
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def find_nvrtc():
    env = os.environ.get("WARPFOLD_NVRTC")
    if env:
        if not os.path.exists(env):
            sys.exit(f"error: WARPFOLD_NVRTC={env} does not exist")
        return env
    cands = []
    try:
        import nvidia.cuda_nvrtc as m  # type: ignore
        for p in list(getattr(m, "__path__", [])):
            cands.append(p)
    except Exception:
        pass
    import site
    paths = []
    try:
        paths += site.getsitepackages()
    except Exception:
        pass
    try:
        paths.append(site.getusersitepackages())
    except Exception:
        pass
    paths += [p for p in sys.path if p]
    for sp in paths:
        cands.append(os.path.join(sp, "nvidia", "cuda_nvrtc"))
    for c in cands:
        libs = sorted(glob.glob(os.path.join(c, "lib", "libnvrtc.so*")))
        libs = [l for l in libs if "builtins" not in l and "alt" not in os.path.basename(l)]
        if libs:
            return libs[0]
    sys.exit("error: libnvrtc not found. Set WARPFOLD_NVRTC=/path/to/libnvrtc.so.12 "
             "or `pip install nvidia-cuda-nvrtc-cu12`")


def find_ptxas():
    p = shutil.which("ptxas")
    if p:
        return p
    try:
        import nvidia.cuda_nvcc as m  # type: ignore
        for d in m.__path__:
            c = os.path.join(d, "bin", "ptxas")
            if os.path.exists(c):
                return c
    except Exception:
        pass
    return None


class Nvrtc:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.nvrtcGetErrorString.restype = ctypes.c_char_p
        L.nvrtcCreateProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                         ctypes.c_char_p, ctypes.c_int,
                                         ctypes.c_void_p, ctypes.c_void_p]
        L.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_char_p)]
        L.nvrtcGetProgramLogSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        L.nvrtcGetProgramLog.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        L.nvrtcGetPTXSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        L.nvrtcGetPTX.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        L.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

    def version(self):
        a, b = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(a), ctypes.byref(b))
        return f"{a.value}.{b.value}"

    def _chk(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(rc).decode()}")

    def compile(self, src, name, opts):
        L = self.lib
        prog = ctypes.c_void_p()
        self._chk(L.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0,
                                       None, None), "nvrtcCreateProgram")
        try:
            arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
            rc = L.nvrtcCompileProgram(prog, len(opts), arr)
            n = ctypes.c_size_t()
            L.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value + 1)
            L.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace")
            if rc != 0:
                return None, log
            L.nvrtcGetPTXSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value + 1)
            self._chk(L.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
            return buf.value.decode(), log
        finally:
            L.nvrtcDestroyProgram(ctypes.byref(prog))


def case_archs(case_dir):
    toml = os.path.join(case_dir, "case.toml")
    if not os.path.exists(toml):
        return ["70", "80"]
    txt = open(toml).read()
    try:
        import tomllib
        return [str(a) for a in tomllib.loads(txt).get("archs", ["70", "80"])]
    except ImportError:
        m = re.search(r'^\s*archs\s*=\s*\[([^\]]*)\]', txt, re.M)
        if not m:
            return ["70", "80"]
        return re.findall(r'"(\d+)"', m.group(1))


def main(argv):
    check = "--check" in argv
    names = [a for a in argv if not a.startswith("--")]
    nv = Nvrtc(find_nvrtc())
    ptxas = find_ptxas() if check else None
    print(f"NVRTC {nv.version()}")
    cases = sorted(d for d in os.listdir(CORPUS)
                   if os.path.exists(os.path.join(CORPUS, d, "kernel.cu")))
    if names:
        missing = [n for n in names if n not in cases]
        if missing:
            sys.exit(f"error: unknown case(s): {' '.join(missing)}")
        cases = names
    failed = 0
    for c in cases:
        d = os.path.join(CORPUS, c)
        src = open(os.path.join(d, "kernel.cu")).read()
        for arch in case_archs(d):
            for fast in (False, True):
                opts = [f"--gpu-architecture=compute_{arch}", "--std=c++17"]
                if fast:
                    opts.append("--use_fast_math")
                out = f"kernel.sm{arch}{'.fast' if fast else ''}.ptx"
                ptx, log = nv.compile(src, "kernel.cu", opts)
                if ptx is None:
                    print(f"FAIL {c}/{out}  ({' '.join(opts)})\n{log}", file=sys.stderr)
                    failed += 1
                    continue
                with open(os.path.join(d, out), "w") as f:
                    f.write(ptx)
                print(f"  {c}/{out}")
                if ptxas:
                    r = subprocess.run([ptxas, f"-arch=sm_{arch}", os.path.join(d, out),
                                        "-o", "/dev/null"], capture_output=True, text=True)
                    if r.returncode != 0:
                        print(f"PTXAS FAIL {c}/{out}\n{r.stderr}", file=sys.stderr)
                        failed += 1
    if failed:
        sys.exit(f"{failed} compile failure(s)")


if __name__ == "__main__":
    main(sys.argv[1:])
