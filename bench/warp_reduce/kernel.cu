// Per-warp sums: each warp of 32 threads adds its 32 consecutive inputs
// with a shuffle-down tree (no shared memory, no barriers); lane 0 writes
// the warp's sum.
extern "C" __global__ void warp_sum(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if ((threadIdx.x & 31) == 0 && i < n) out[i >> 5] = v;
}
