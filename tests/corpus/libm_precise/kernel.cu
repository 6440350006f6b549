// Precise libdevice math (f32 and f64). Fast-math variants turn the f32 ones into .approx sequences.
extern "C" __global__ void libm(int n, const float* x, const float* y, const double* d,
                                float* s, float* c, float* e, float* l, float* p, float* q,
                                float* er, float* th, double* ds, double* de, double* dl)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i]; double g = d[i];
    s[i] = sinf(a);                       // a in [-pi, pi]
    c[i] = cosf(a);
    e[i] = expf(a * 3.0f);
    l[i] = logf(b);                       // b in [0.01, 1000]
    p[i] = powf(b * 0.004f + 0.5f, a);
    q[i] = sqrtf(b);
    er[i] = erff(a);
    th[i] = tanhf(a * 1.5f);
    ds[i] = sin(g);                       // g in [-10, 10]
    de[i] = exp(g * 2.0);
    dl[i] = log(fabs(g) * 1000.0 + 1e-3);
}
