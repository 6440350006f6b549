// integer -> float/double conversions in all rounding modes, and double -> float rounding.
extern "C" __global__ void i2f(int n, const int* a, const long long* l, const double* d,
                               float* of, double* od)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = a[i]; long long w = l[i]; double g = d[i];
    float* o = of + i * 20;
    o[0] = __int2float_rn(v); o[1] = __int2float_rz(v); o[2] = __int2float_rd(v); o[3] = __int2float_ru(v);
    o[4] = __uint2float_rn((unsigned)v); o[5] = __uint2float_rz((unsigned)v); o[6] = __uint2float_rd((unsigned)v); o[7] = __uint2float_ru((unsigned)v);
    o[8] = __ll2float_rn(w); o[9] = __ll2float_rz(w); o[10] = __ll2float_rd(w); o[11] = __ll2float_ru(w);
    o[12] = __ull2float_rn((unsigned long long)w); o[13] = __ull2float_rd((unsigned long long)w);
    o[14] = __double2float_rn(g); o[15] = __double2float_rz(g); o[16] = __double2float_rd(g); o[17] = __double2float_ru(g);
    o[18] = (float)v; o[19] = (float)g;
    double* p = od + i * 6;
    p[0] = __ll2double_rn(w); p[1] = __ll2double_rz(w); p[2] = __ll2double_rd(w); p[3] = __ll2double_ru(w);
    p[4] = __ull2double_rd((unsigned long long)w); p[5] = (double)v;
}
