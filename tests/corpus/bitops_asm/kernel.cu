// Bit-field and logic instructions through inline PTX: bfe.u32/s32, bfi.b32, bfind(.shiftamt),
// shf.l/r.wrap/clamp, prmt (default and f4e/b4e/rc8/ecl/ecr/rc16 modes), lop3, not, cnot.
extern "C" __global__ void bitasm(int n, const unsigned* x, const unsigned* y, const unsigned* z,
                                  unsigned* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[i], b = y[i], c = z[i], r;
    unsigned* o = out + i * 24;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[0] = r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[1] = r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(c), "r"(b), "r"(b >> 8)); o[2] = r;
    asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(a)); o[3] = r;
    asm("bfind.s32 %0, %1;" : "=r"(r) : "r"(a)); o[4] = r;
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(a)); o[5] = r;
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[6] = r;
    asm("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[7] = r;
    asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[8] = r;
    asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[9] = r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[10] = r;  // incl. sign replicate
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[11] = r;
    asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[12] = r;
    asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[13] = r;
    asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[14] = r;
    asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[15] = r;
    asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[16] = r;
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[17] = r;  // a^b^c
    asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[18] = r;  // majority
    asm("lop3.b32 %0, %1, %2, %3, 0xCA;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[19] = r;  // a?b:c
    asm("lop3.b32 %0, %1, %2, %3, 0x1E;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[20] = r;  // a^(b|c)
    asm("not.b32 %0, %1;" : "=r"(r) : "r"(a)); o[21] = r;
    asm("cnot.b32 %0, %1;" : "=r"(r) : "r"(a & c)); o[22] = r;
    asm("bfind.shiftamt.s32 %0, %1;" : "=r"(r) : "r"(a)); o[23] = r;
}
