// Per-block inclusive scan (Hillis-Steele, double buffered) of 256 elements.
extern "C" __global__ void scan(const int* x, int* y, int n)
{
    __shared__ int buf[2][256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int cur = 0;
    buf[0][t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int v = buf[cur][t];
        if (t >= off) v += buf[cur][t - off];
        buf[1 - cur][t] = v;
        cur = 1 - cur;
        __syncthreads();
    }
    if (i < n) y[i] = buf[cur][t];
}
