// Block sum with shared memory tree + __syncthreads; partial last block guarded.
extern "C" __global__ void reduce_sum(const int* x, int* sums, int n)
{
    __shared__ int buf[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = buf[0];
}
