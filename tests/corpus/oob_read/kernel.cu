// Error case: the last thread reads one element past the end of its buffer.
extern "C" __global__ void oob(const int* x, int* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + x[i + 1];   // i = n-1 reads x[n]
}
