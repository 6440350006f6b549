// Directed-rounding double precision intrinsics (f64 is never flushed, also not by fast-math).
extern "C" __global__ void dir64(int n, const double* x, const double* y, const double* z, double* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i], b = y[i], c = z[i];
    double* o = out + i * 24;
    o[0] = __dadd_rn(a, b); o[1] = __dadd_rz(a, b); o[2] = __dadd_rd(a, b); o[3] = __dadd_ru(a, b);
    o[4] = __dmul_rn(a, b); o[5] = __dmul_rz(a, b); o[6] = __dmul_rd(a, b); o[7] = __dmul_ru(a, b);
    o[8] = __fma_rn(a, b, c); o[9] = __fma_rz(a, b, c); o[10] = __fma_rd(a, b, c); o[11] = __fma_ru(a, b, c);
    o[12] = __ddiv_rn(a, b); o[13] = __ddiv_rz(a, b); o[14] = __ddiv_rd(a, b); o[15] = __ddiv_ru(a, b);
    o[16] = __dsqrt_rn(a); o[17] = __dsqrt_rz(a); o[18] = __dsqrt_rd(a); o[19] = __dsqrt_ru(a);
    o[20] = __drcp_rn(a); o[21] = __drcp_rz(a); o[22] = __drcp_rd(a); o[23] = __drcp_ru(a);
}
