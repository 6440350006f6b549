// Histogram with shared-memory atomics, then merged into global with atomicAdd.
extern "C" __global__ void histo(const unsigned char* data, int n, unsigned* hist)
{
    __shared__ unsigned h[64];
    for (int k = threadIdx.x; k < 64; k += blockDim.x) h[k] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&h[data[i] & 63], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < 64; k += blockDim.x) atomicAdd(&hist[k], h[k]);
}
