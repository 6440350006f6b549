// bfloat16 through inline PTX (sm_80): cvt.rn/rz.bf16.f32, fma.rn.bf16 (add = fma(a,1,b),
// sub = fma(b,-1,a), mul = fma(a,b,-0)), cvt.f32.bf16.
extern "C" __global__ void bf16_k(int n, const float* x, const float* y, const float* z,
                                  unsigned short* o16, float* of)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i];
    unsigned short* o = o16 + i * 6;
    unsigned short ha, hb, hc, r, one = 0x3f80, mone = 0xbf80, mzero = 0x8000;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(ha) : "f"(a)); o[0] = ha;
    asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(r) : "f"(a)); o[1] = r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(hb) : "f"(b));
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(hc) : "f"(c));
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(ha), "h"(one), "h"(hb)); o[2] = r;
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(hb), "h"(mone), "h"(ha)); o[3] = r;
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(ha), "h"(hb), "h"(mzero)); o[4] = r;
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(ha), "h"(hb), "h"(hc)); o[5] = r;
    float fa, ff;
    asm("cvt.f32.bf16 %0, %1;" : "=f"(fa) : "h"(ha));
    asm("{ .reg .b16 t; fma.rn.bf16 t, %1, %2, %3; cvt.f32.bf16 %0, t; }" : "=f"(ff) : "h"(hb), "h"(hc), "h"(ha));
    of[i * 2] = fa; of[i * 2 + 1] = ff;
}
