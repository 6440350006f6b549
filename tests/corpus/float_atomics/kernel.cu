// float and double atomicAdd with integer-valued data (exact in any order), plus per-block partials.
extern "C" __global__ void fatomic(const float* x, const double* d, float* fs, double* ds)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&fs[0], x[t]);
    atomicAdd(&fs[1 + blockIdx.x], x[t] * 2.0f);
    atomicAdd(&ds[0], d[t]);
    atomicAdd(&ds[1 + (t & 3)], d[t] * 0.25);
}
