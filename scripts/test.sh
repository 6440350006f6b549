#!/usr/bin/env bash
# Run the whole warpfold test suite, installing what it needs first.
# Needs: a Rust toolchain (cargo) and python3 with pip (for NVRTC, which the
# CUDA-source tests use; PTX tests need nothing else).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "error: cargo not found; install Rust from rustup" >&2
    exit 1
fi

# NVRTC for the .cu tests: the pip package provides libnvrtc.so.12.
if [ -z "${WARPFOLD_NVRTC:-}" ] && [ -z "${WARPFOLD_SKIP_NVRTC:-}" ]; then
    if ! python3 -c "import nvidia.cuda_nvrtc, os, sys; p=os.path.join(list(nvidia.cuda_nvrtc.__path__)[0],'lib','libnvrtc.so.12'); sys.exit(0 if os.path.exists(p) else 1)" 2>/dev/null; then
        echo "== installing NVRTC (pip install nvidia-cuda-nvrtc-cu12)"
        python3 -m pip install --quiet nvidia-cuda-nvrtc-cu12 || {
            echo "error: could not install NVRTC; set WARPFOLD_SKIP_NVRTC=1 to skip the .cu tests" >&2
            exit 1
        }
    fi
fi

echo "== cargo test (release)"
cargo test --release --workspace "$@"
