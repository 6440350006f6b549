// Round to integral value keeping the float type: rintf/truncf/floorf/ceilf (cvt.rni/rzi/rmi/rpi),
// roundf (half away from zero), and the double versions.
extern "C" __global__ void rint_k(int n, const float* x, const double* d, float* of, double* od)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float f = x[i]; double g = d[i];
    of[i * 5 + 0] = rintf(f); of[i * 5 + 1] = truncf(f); of[i * 5 + 2] = floorf(f); of[i * 5 + 3] = ceilf(f);
    of[i * 5 + 4] = roundf(f);
    od[i * 5 + 0] = rint(g); od[i * 5 + 1] = trunc(g); od[i * 5 + 2] = floor(g); od[i * 5 + 3] = ceil(g);
    od[i * 5 + 4] = round(g);
}
