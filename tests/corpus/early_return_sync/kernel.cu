// Some threads return before the barrier; the rest use __syncthreads. Per the PTX ISA, exited threads
// no longer hold up bar.sync, so this completes.
extern "C" __global__ void early(const int* x, int* out, int n)
{
    __shared__ int s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (i >= n) return;                          // partial last block: threads leave early
    s[t] = x[i];
    __syncthreads();
    int lim = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
    out[i] = s[t] + s[(t + 1) % lim];
}
