// Kernels for crates/runtime/tests/fresh_functions.rs. Regenerate the PTX
// with
//   warpfold inspect fresh_functions.cu --emit ptx > fresh_functions.ptx

// The suite's batched LU factorisation (no pivoting: the matrices are diagonally
// dominant) and solve of 16x16 systems A x = b, in the warp-register-cache
// style: 16 lanes own one matrix, lane i keeps row i in registers, and the
// pivot row and the solved unknowns travel between lanes by __shfl_sync,
// never through memory.
#define N 16
extern "C" __global__ void lu_solve(const float* A, const float* b, float* x, int batch)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int m = gid / N, i = gid % N;
    const float* row = A + ((long)m * N + i) * N;
    float a[N];
#pragma unroll
    for (int j = 0; j < N; j++) a[j] = row[j] + (j == i ? (float)N : 0.0f);
    float y = b[m * N + i];
    // L (unit diagonal) below the diagonal, U on and above it.
#pragma unroll
    for (int k = 0; k < N; k++) {
        float u[N];
#pragma unroll
        for (int j = k; j < N; j++) u[j] = __shfl_sync(0xffffffffu, a[j], k, N);
        float l = a[k] / u[k];
        bool below = i > k;
#pragma unroll
        for (int j = k + 1; j < N; j++) a[j] = below ? a[j] - l * u[j] : a[j];
        a[k] = below ? l : a[k];
    }
    // L y = b
#pragma unroll
    for (int k = 0; k < N; k++) {
        float yk = __shfl_sync(0xffffffffu, y, k, N);
        if (i > k) y -= a[k] * yk;
    }
    // U x = y
    float xi = 0.0f;
#pragma unroll
    for (int k = N - 1; k >= 0; k--) {
        if (i == k) xi = y / a[k];
        float xk = __shfl_sync(0xffffffffu, xi, k, N);
        if (i < k) y -= a[k] * xk;
    }
    x[m * N + i] = xi;
}
