// Mandelbrot iteration counts: divergent loops with data-dependent trip counts.
// Uses dyadic coordinates and explicit __fmul_rn/__fadd_rn so no fma contraction occurs.
extern "C" __global__ void mandel(int* out, int w, int h, int maxit)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cx = -2.0f + px * (3.0f / 64.0f), cy = -1.25f + py * (2.5f / 64.0f);
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < maxit && __fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)) <= 4.0f) {
        float xt = __fadd_rn(__fsub_rn(__fmul_rn(x, x), __fmul_rn(y, y)), cx);
        y = __fadd_rn(__fmul_rn(2.0f, __fmul_rn(x, y)), cy);
        x = xt;
        it++;
    }
    out[py * w + px] = it;
}
