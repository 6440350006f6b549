// NaN/inf/-0 through add/mul/fma/fminf/fmaxf/copysign/fabs/neg/__saturatef, add.sat.f32;
// subnormals through explicit .ftz and non-.ftz inline PTX (unaffected by fast-math).
extern "C" __global__ void special(int n, const float* x, const float* y, const float* z,
                                   const float* s, const float* t, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i], S = s[i], T = t[i], r;
    float* o = out + i * 16;
    o[0] = a + b; o[1] = a * b; o[2] = fmaf(a, b, c); o[3] = fminf(a, b); o[4] = fmaxf(a, b);
    o[5] = __saturatef(c); o[6] = copysignf(a, b); o[7] = fabsf(a); o[8] = -a;
    asm("add.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(c), "f"(b)); o[9] = r;
    asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(S), "f"(T)); o[10] = r;
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(S), "f"(T)); o[11] = r;
    asm("mul.f32 %0, %1, %2;" : "=f"(r) : "f"(S), "f"(T)); o[12] = r;
    asm("add.f32 %0, %1, %2;" : "=f"(r) : "f"(S), "f"(T)); o[13] = r;
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(S), "f"(T), "f"(S)); o[14] = r;
    asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(S), "f"(T)); o[15] = r;
}
