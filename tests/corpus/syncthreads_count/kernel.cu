// __syncthreads_count / __syncthreads_and / __syncthreads_or (bar.red.popc/and/or).
extern "C" __global__ void barred(const int* x, int* out)
{
    int t = threadIdx.x, v = x[blockIdx.x * blockDim.x + t];
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v > -900);
    int o = __syncthreads_or(v > 990);
    if (t == 0) { out[blockIdx.x * 3] = c; out[blockIdx.x * 3 + 1] = a != 0; out[blockIdx.x * 3 + 2] = o != 0; }
}
