// Iterative Jacobi smoothing in shared memory: __syncthreads inside a loop with a runtime trip count.
extern "C" __global__ void jacobi(const int* x, int* out, int iters)
{
    __shared__ int a[2][130];
    int t = threadIdx.x + 1;
    a[0][t] = x[blockIdx.x * 128 + threadIdx.x];
    if (threadIdx.x == 0) { a[0][0] = a[1][0] = 0; a[0][129] = a[1][129] = 0; }
    __syncthreads();
    int cur = 0;
    for (int k = 0; k < iters; k++) {
        a[1 - cur][t] = (a[cur][t - 1] + 2 * a[cur][t] + a[cur][t + 1]) / 4;
        cur = 1 - cur;
        __syncthreads();
    }
    out[blockIdx.x * 128 + threadIdx.x] = a[cur][t];
}
