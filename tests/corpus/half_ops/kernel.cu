// binary16 through inline PTX (NVRTC 12.9 here has no built-in cuda_fp16.h):
// cvt.{rn,rz,rm,rp}.f16.f32, add/sub/mul/fma.rn/neg/abs .f16, .f16x2 add/mul/fma, cvt.f32.f16, setp.lt.f16.
__device__ __forceinline__ unsigned short h_rn(float a) { unsigned short r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(a)); return r; }
extern "C" __global__ void half_k(int n, const float* x, const float* y, const float* z,
                                  unsigned short* o16, float* of)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i];
    unsigned short* o = o16 + i * 16;
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(a)); o[0] = r;
    asm("cvt.rz.f16.f32 %0, %1;" : "=h"(r) : "f"(a)); o[1] = r;
    asm("cvt.rm.f16.f32 %0, %1;" : "=h"(r) : "f"(a)); o[2] = r;
    asm("cvt.rp.f16.f32 %0, %1;" : "=h"(r) : "f"(a)); o[3] = r;
    unsigned short ha = h_rn(a), hb = h_rn(b), hc = h_rn(c);
    asm("add.f16 %0, %1, %2;" : "=h"(r) : "h"(ha), "h"(hb)); o[4] = r;
    asm("sub.f16 %0, %1, %2;" : "=h"(r) : "h"(ha), "h"(hb)); o[5] = r;
    asm("mul.f16 %0, %1, %2;" : "=h"(r) : "h"(ha), "h"(hb)); o[6] = r;
    asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(ha), "h"(hb), "h"(hc)); o[7] = r;
    asm("neg.f16 %0, %1;" : "=h"(r) : "h"(ha)); o[8] = r;
    asm("abs.f16 %0, %1;" : "=h"(r) : "h"(hb)); o[9] = r;
    unsigned p, q, s, m, f;
    asm("mov.b32 %0, {%1, %2};" : "=r"(p) : "h"(ha), "h"(hb));   // low = ha, high = hb
    asm("mov.b32 %0, {%1, %2};" : "=r"(q) : "h"(hc), "h"(ha));
    asm("add.f16x2 %0, %1, %2;" : "=r"(s) : "r"(p), "r"(q));
    asm("mul.f16x2 %0, %1, %2;" : "=r"(m) : "r"(p), "r"(q));
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(f) : "r"(p), "r"(q), "r"(p));
    o[10] = s & 0xffff; o[11] = s >> 16; o[12] = m & 0xffff; o[13] = m >> 16; o[14] = f & 0xffff; o[15] = f >> 16;
    float fa, fs; unsigned short sum;
    asm("cvt.f32.f16 %0, %1;" : "=f"(fa) : "h"(ha));
    asm("add.f16 %0, %1, %2;" : "=h"(sum) : "h"(ha), "h"(hb));
    asm("cvt.f32.f16 %0, %1;" : "=f"(fs) : "h"(sum));
    unsigned lt;
    asm("{ .reg .pred p; setp.lt.f16 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(lt) : "h"(ha), "h"(hb));
    of[i * 3 + 0] = fa; of[i * 3 + 1] = fs; of[i * 3 + 2] = lt ? 1.0f : 0.0f;
}
