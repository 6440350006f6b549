// Directed-rounding single precision intrinsics. Inputs avoid subnormal operands/results so the
// --use_fast_math (.ftz) variants give the same bits; subnormals are covered by directed_f32_subnormal_asm.
extern "C" __global__ void dir32(int n, const float* x, const float* y, const float* z, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i];
    float* o = out + i * 28;
    o[0] = __fadd_rn(a, b);  o[1] = __fadd_rz(a, b);  o[2] = __fadd_rd(a, b);  o[3] = __fadd_ru(a, b);
    o[4] = __fsub_rn(a, b);  o[5] = __fsub_rz(a, b);  o[6] = __fsub_rd(a, b);  o[7] = __fsub_ru(a, b);
    o[8] = __fmul_rn(a, b);  o[9] = __fmul_rz(a, b);  o[10] = __fmul_rd(a, b); o[11] = __fmul_ru(a, b);
    o[12] = __fmaf_rn(a, b, c); o[13] = __fmaf_rz(a, b, c); o[14] = __fmaf_rd(a, b, c); o[15] = __fmaf_ru(a, b, c);
    o[16] = __fdiv_rn(a, b); o[17] = __fdiv_rz(a, b); o[18] = __fdiv_rd(a, b); o[19] = __fdiv_ru(a, b);
    o[20] = __fsqrt_rn(a);   o[21] = __fsqrt_rz(a);   o[22] = __fsqrt_rd(a);   o[23] = __fsqrt_ru(a);
    o[24] = __frcp_rn(a);    o[25] = __frcp_rz(a);    o[26] = __frcp_rd(a);    o[27] = __frcp_ru(a);
}
