#!/usr/bin/env bash
# Run the whole warpfold test suite, installing what it needs first.
# Needs: a Rust toolchain (cargo), LLVM 14 (installed with apt-get when
# missing) and python3 with pip (for NVRTC, which the CUDA-source tests use).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "error: cargo not found; install Rust from rustup" >&2
    exit 1
fi

# LLVM 14 for the compiled backend (inkwell links libLLVM-14).
if ! command -v llvm-config >/dev/null && [ ! -x /usr/lib/llvm-14/bin/llvm-config ]; then
    echo "== installing LLVM 14 (apt-get install llvm-14-dev)"
    if command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq llvm-14-dev zlib1g-dev >/dev/null
    else
        echo "error: LLVM 14 is needed (llvm-config); install llvm-14-dev" >&2
        exit 1
    fi
fi
if [ -z "${LLVM_SYS_140_PREFIX:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-config ]; then
    export LLVM_SYS_140_PREFIX=/usr/lib/llvm-14
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

# A fresh disk cache of compiled kernels: the first test to compile a
# kernel generates its code, later test processes load it from there (both
# paths run); the user's own cache is left alone.
if [ -z "${WARPFOLD_CACHE_DIR:-}" ]; then
    WARPFOLD_CACHE_DIR="$(mktemp -d -t warpfold-test-cache.XXXXXX)"
    export WARPFOLD_CACHE_DIR
    trap 'rm -rf "$WARPFOLD_CACHE_DIR"' EXIT
fi

echo "== cargo test (release)"
cargo test --release --workspace "$@"

# The compiled backend again, generating code for machines without AVX-512
# (AVX2, x86-64-v3): the differential tests against the interpreter.
if [ $# -eq 0 ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "== compiled backend for AVX2 machines (WARPFOLD_CPU=x86-64-v3)"
    WARPFOLD_CPU=x86-64-v3 cargo test --release -p warpfold \
        --test corpus --test random_kernels --test lane_forms --test barriers --test semantics \
        --test shared_windows --test whole_warps --test tree_tails --test vector_groups \
        --test indexed --test diamonds --test load_groups --test nvrtc
fi

# Narrower warps (8 and 16 lanes) wherever a kernel allows them: the
# differential tests again, at each width.
if [ $# -eq 0 ]; then
    for lanes in 8 16; do
        echo "== compiled backend with warps of $lanes lanes (WARPFOLD_WARP_WIDTH=$lanes)"
        WARPFOLD_WARP_WIDTH=$lanes cargo test --release -p warpfold \
            --test corpus --test random_kernels --test lane_forms --test barriers \
            --test semantics --test packing --test named_barriers --test diamonds
    done
fi

# Yields everywhere: warps give up their turn after two dispatcher visits
# or loop trips, so every point of every loop is a place where a warp's
# state is saved and resumed (a yield inside a divergent loop once read
# wild addresses). The random kernels are left out: some race on shared
# memory or atomics after divergent loops, and yielding changes which
# racing lane writes last.
if [ $# -eq 0 ]; then
    echo "== compiled backend yielding at every turn (WARPFOLD_YIELD_BUDGET=2)"
    WARPFOLD_YIELD_BUDGET=2 cargo test --release -p warpfold \
        -- --skip random_kernels_agree_between_backends
fi

# And for machines without AVX (SSE4.2, x86-64-v2), where half-precision
# widening is a call into the runtime: the semantics tests (fast).
if [ $# -eq 0 ]; then
    echo "== compiled backend for SSE4.2 machines (WARPFOLD_CPU=x86-64-v2)"
    WARPFOLD_CPU=x86-64-v2 cargo test --release -p warpfold --test semantics
fi
