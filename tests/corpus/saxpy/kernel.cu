// y[i] = a*x[i] + y[i] with a grid-stride loop and a bounds guard.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = fmaf(a, x[i], y[i]);
}
