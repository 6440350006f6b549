// A __noinline__ function taking generic pointers that point to shared, global or local memory.
__device__ __noinline__ int accumulate(int* p, int n, int add)
{
    int s = 0;
    for (int k = 0; k < n; k++) { p[k] += add; s += p[k]; }
    return s;
}
extern "C" __global__ void generic(int* g, int* out)
{
    __shared__ int sh[64 * 4];
    int t = threadIdx.x;
    int loc[4] = {t, t + 1, t + 2, t + 3};
    for (int k = 0; k < 4; k++) sh[t * 4 + k] = t * 10 + k;
    int* p = (t & 1) ? &sh[t * 4] : &g[t * 4];          // divergent: shared or global
    int a = accumulate(p, 4, 5);
    int b = accumulate(loc, 4, t);                         // local
    __syncthreads();
    out[t * 3] = a; out[t * 3 + 1] = b; out[t * 3 + 2] = sh[t * 4 + 3] + __isShared(p) * 1000 + __isGlobal(p) * 2000;
}
