// Kernel for crates/runtime/tests/shared_regs.rs. Regenerate the PTX with
//   warpfold inspect shared_regs.cu --emit ptx > shared_regs.ptx
//
// A scan whose rounds the compiled backend unrolls over a CTA's warps, so
// that its shared accesses sit at constant offsets and are kept in
// registers (crates/cpu/src/shared_regs.rs): each block's inputs are
// scanned in `s[3..B+3)`, so the array's last 64-byte chunk (bytes
// 256..268) is partial, and `s[0..3)` are read back at the end.
#define B 64

extern "C" __global__ void scan_partial(const float* in, float* out)
{
    __shared__ float s[B + 3];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t + 3] = in[i];
    if (t < 3) s[t] = (float)(t + 1);
    __syncthreads();
#pragma unroll
    for (int d = 1; d < B; d <<= 1) {
        float v = t >= d ? s[t + 3 - d] : 0.0f;
        __syncthreads();
        s[t + 3] += v;
        __syncthreads();
    }
    out[i] = s[t + 3] + s[t % 3];
}

// A tree sum whose CTA ends right after its last read of shared memory:
// the compiled backend drops the partial sums it would write back there
// (nothing reads a CTA's shared memory once it has finished).
#define R 128

extern "C" __global__ void tree_sum(const int* in, int* out)
{
    __shared__ int s[R];
    int t = threadIdx.x, i = blockIdx.x * R + t;
    s[t] = in[i];
    __syncthreads();
    for (int d = R / 2; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
