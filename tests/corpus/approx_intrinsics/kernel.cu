// .approx intrinsics: __sinf __cosf __expf __logf __fdividef rsqrtf, and inline PTX
// ex2.approx.f32, lg2.approx.f32, rcp.approx.ftz.f64. Checked with relative/absolute bounds.
extern "C" __global__ void approx(int n, const float* x, const float* y, const double* d,
                                  float* s, float* c, float* e, float* l, float* q, float* rs,
                                  float* e2, float* l2, double* rc)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], r; double g = d[i], h;
    s[i] = __sinf(a); c[i] = __cosf(a);          // a in [-pi, pi]
    e[i] = __expf(a * 3.0f);
    l[i] = __logf(b);                            // b in [0.01, 1000]
    q[i] = __fdividef(a, b);
    rs[i] = rsqrtf(b);
    asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(a * 3.0f)); e2[i] = r;
    asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(b)); l2[i] = r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(h) : "d"(g)); rc[i] = h;
}
