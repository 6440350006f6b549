// 256-bin histogram of the low byte of each input. Each block counts into
// its own histogram in shared memory with shared atomics over a grid-stride
// loop, then adds its non-zero bins to the global histogram with global
// atomics. The global bins accumulate over launches.
#define BINS 256
extern "C" __global__ void histogram(int* hist, const int* data, int n)
{
    __shared__ int h[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
    __syncthreads();
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&h[data[i] & (BINS - 1)], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        int c = h[b];
        if (c) atomicAdd(&hist[b], c);
    }
}
