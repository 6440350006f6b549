// Calls through function pointers: a table of device functions in global
// memory (an initialiser holding function addresses) and one built in the kernel.
typedef float (*unop)(float);
__device__ __noinline__ float f_sq(float x) { return x * x; }
__device__ __noinline__ float f_neg(float x) { return -x; }
__device__ __noinline__ float f_half(float x) { return x * 0.5f; }
__device__ unop g_table[3] = { f_sq, f_neg, f_half };

extern "C" __global__ void fp_global(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = g_table[i % 3](x[i]);
}

extern "C" __global__ void fp_local(const float* x, float* y, const int* sel, int n)
{
    unop t[3] = { f_sq, f_neg, f_half };
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = t[sel[i]](x[i]);
}
