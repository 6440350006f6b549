// tanh.approx.f32 (sm_75+), only built for sm_80.
extern "C" __global__ void tanh_k(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x[i]));
    y[i] = r;
}
