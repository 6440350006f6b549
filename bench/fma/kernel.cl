__kernel void fma_peak(__global float* out, float m, float c, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float x0 = i * 1e-6f, x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
    float x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
    for (int k = 0; k < 512; k++) {
        x0 = fma(x0, m, c); x1 = fma(x1, m, c); x2 = fma(x2, m, c); x3 = fma(x3, m, c);
        x4 = fma(x4, m, c); x5 = fma(x5, m, c); x6 = fma(x6, m, c); x7 = fma(x7, m, c);
    }
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
