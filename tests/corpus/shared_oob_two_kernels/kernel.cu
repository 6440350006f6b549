// Reading past a __shared__ array must be caught even when another kernel
// of the module has a large shared array (each kernel gets only its own).
extern "C" __global__ void oob_shared(int* out, int idx)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x + idx];
}

extern "C" __global__ void other(int* out)
{
    __shared__ int big[1024];
    big[threadIdx.x] = 5;
    __syncthreads();
    out[threadIdx.x] = big[(threadIdx.x + 1) % blockDim.x];
}
