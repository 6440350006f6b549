// Warp sum with __shfl_down_sync, lane 0 writes; then per-warp max via __shfl_xor_sync butterfly.
extern "C" __global__ void warp_reduce(const int* x, int* sums, int* maxs)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i], m = v;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    for (int off = 1; off < 32; off <<= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0) sums[i / 32] = v;
    maxs[i] = m;
}
