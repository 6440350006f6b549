// float/double -> integer conversions in all rounding modes; out-of-range saturates, NaN -> 0.
extern "C" __global__ void f2i(int n, const float* x, const double* d, int* o32, long long* o64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float f = x[i]; double g = d[i];
    int* o = o32 + i * 17;
    o[0] = __float2int_rn(f); o[1] = __float2int_rz(f); o[2] = __float2int_rd(f); o[3] = __float2int_ru(f);
    o[4] = (int)__float2uint_rn(f); o[5] = (int)__float2uint_rz(f); o[6] = (int)__float2uint_rd(f); o[7] = (int)__float2uint_ru(f);
    o[8] = __double2int_rn(g); o[9] = __double2int_rz(g); o[10] = __double2int_rd(g); o[11] = __double2int_ru(g);
    o[12] = (int)__double2uint_rn(g); o[13] = (int)__double2uint_rz(g);
    o[14] = (int)f;                     // C cast = rz
    o[15] = (int)(unsigned)__float2uint_rz(f);
    o[16] = __float2int_rn(f * 0.5f);
    long long* q = o64 + i * 8;
    q[0] = __float2ll_rn(f); q[1] = __float2ll_rz(f); q[2] = __float2ll_rd(f); q[3] = __float2ll_ru(f);
    q[4] = (long long)__float2ull_rn(f); q[5] = __double2ll_rd(g); q[6] = (long long)__double2ull_ru(g);
    q[7] = (long long)g;
}
