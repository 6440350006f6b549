// __constant__ and __device__ arrays with initialisers; the kernel also updates the __device__ array.
__constant__ int ctab[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant__ double cscale = 0.125;
__device__ int gtab[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__device__ unsigned long long gcount = 1000;
extern "C" __global__ void consts(const int* x, int* out, double* od, unsigned long long* oc)
{
    int t = threadIdx.x;
    out[t] = ctab[x[t] & 7] * gtab[t & 15];
    od[t] = x[t] * cscale;
    __syncthreads();  // every read of gtab happens before any update
    atomicAdd(&gtab[t & 15], 1);
    atomicAdd(&gcount, 2ull);
    __syncthreads();
    if (t == 0) { oc[0] = gcount; for (int k = 0; k < 16; k++) out[64 + k] = gtab[k]; }
}
