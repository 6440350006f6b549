// Atomic float max implemented with an atomicCAS loop on the bit pattern.
__device__ float atomic_fmax(float* addr, float v)
{
    int* a = (int*)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (old != assumed);
    return __int_as_float(old);
}
extern "C" __global__ void fmax_cas(const float* x, float* m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomic_fmax(&m[0], x[t]);
    atomic_fmax(&m[1 + (t & 7)], -x[t]);
}
