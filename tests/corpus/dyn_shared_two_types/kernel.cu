// Dynamic extern __shared__ buffer carved into a double array and an int array.
extern "C" __global__ void carve(const int* x, double* outd, int* outi)
{
    extern __shared__ double smem[];
    int n = blockDim.x;
    double* d = smem;                    // n doubles
    int* k = (int*)(smem + n);           // then n ints
    int t = threadIdx.x, g = blockIdx.x * n + t;
    d[t] = x[g] * 0.5;
    k[t] = x[g] * 3;
    __syncthreads();
    outd[g] = d[n - 1 - t] + d[t];
    outi[g] = k[(t + 1) % n] - k[t];
}
