// Ordered/unordered float compares with NaN, setp with predicate combination (.and/.or/.xor),
// selp, slct, set.<cmp>.u32.f32, and testp on separate (possibly subnormal) inputs.
extern "C" __global__ void cmp(int n, const float* x, const float* y, const int* p, const int* q,
                               const float* t, unsigned* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], u = t[i]; int P = p[i], Q = q[i];
    unsigned* o = out + i * 20, r;
    o[0] = a < b; o[1] = a <= b; o[2] = a == b; o[3] = a != b; o[4] = a > b; o[5] = a >= b;
    o[6] = !(a < b); o[7] = isnan(a) || isnan(b); o[8] = isnan(a) != 0; o[9] = isinf(a) != 0;
    o[10] = isfinite(a) != 0; o[11] = signbit(a) != 0;
    asm("{ .reg .pred t, r; setp.lt.f32 t, %1, %2; setp.lt.and.s32 r, %3, %4, t; selp.u32 %0, 1, 0, r; }" : "=r"(r) : "f"(a), "f"(b), "r"(P), "r"(Q)); o[12] = r;
    asm("{ .reg .pred t, r; setp.ge.f32 t, %1, %2; setp.gt.or.s32 r, %3, %4, t; selp.u32 %0, 1, 0, r; }" : "=r"(r) : "f"(a), "f"(b), "r"(P), "r"(Q)); o[13] = r;
    asm("{ .reg .pred t, r; setp.nan.f32 t, %1, %2; setp.ne.xor.s32 r, %3, %4, !t; selp.u32 %0, 1, 0, r; }" : "=r"(r) : "f"(a), "f"(b), "r"(P), "r"(Q)); o[14] = r;
    asm("{ .reg .pred t; setp.ltu.f32 t, %1, %2; selp.b32 %0, %3, %4, t; }" : "=r"(r) : "f"(a), "f"(b), "r"(P), "r"(Q)); o[15] = r;
    asm("slct.s32.f32 %0, %1, %2, %3;" : "=r"(r) : "r"(P), "r"(Q), "f"(a)); o[16] = r;
    asm("set.gt.u32.f32 %0, %1, %2;" : "=r"(r) : "f"(a), "f"(b)); o[17] = r;
    asm("set.gtu.u32.f32 %0, %1, %2;" : "=r"(r) : "f"(a), "f"(b)); o[18] = r;
    asm("{ .reg .pred a, b, c, d, e, f; testp.subnormal.f32 a, %1; testp.normal.f32 b, %1; testp.notanumber.f32 c, %1;"
        " testp.number.f32 d, %1; testp.finite.f32 e, %1; testp.infinite.f32 f, %1;"
        " .reg .u32 ra, rb, rc, rd, re, rf; selp.u32 ra, 1, 0, a; selp.u32 rb, 2, 0, b; selp.u32 rc, 4, 0, c;"
        " selp.u32 rd, 8, 0, d; selp.u32 re, 16, 0, e; selp.u32 rf, 32, 0, f;"
        " or.b32 ra, ra, rb; or.b32 ra, ra, rc; or.b32 ra, ra, rd; or.b32 ra, ra, re; or.b32 %0, ra, rf; }" : "=r"(r) : "f"(u)); o[19] = r;
}
