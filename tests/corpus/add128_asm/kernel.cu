// 128-bit add/sub and 64x64->128 multiply with carry chains in inline PTX:
// add.cc/addc.cc/addc, sub.cc/subc.cc/subc, mad.lo.cc/madc.hi(.cc).
extern "C" __global__ void wide128(int n, const unsigned* a, const unsigned* b,
                                   unsigned* sum, unsigned* diff, unsigned* prod)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned* A = a + 4 * i; const unsigned* B = b + 4 * i;
    unsigned s0, s1, s2, s3;
    asm("add.cc.u32 %0, %4, %8;\n\t"
        "addc.cc.u32 %1, %5, %9;\n\t"
        "addc.cc.u32 %2, %6, %10;\n\t"
        "addc.u32 %3, %7, %11;"
        : "=r"(s0), "=r"(s1), "=r"(s2), "=r"(s3)
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]));
    sum[4 * i] = s0; sum[4 * i + 1] = s1; sum[4 * i + 2] = s2; sum[4 * i + 3] = s3;
    asm("sub.cc.u32 %0, %4, %8;\n\t"
        "subc.cc.u32 %1, %5, %9;\n\t"
        "subc.cc.u32 %2, %6, %10;\n\t"
        "subc.u32 %3, %7, %11;"
        : "=r"(s0), "=r"(s1), "=r"(s2), "=r"(s3)
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]));
    diff[4 * i] = s0; diff[4 * i + 1] = s1; diff[4 * i + 2] = s2; diff[4 * i + 3] = s3;
    // (A1:A0) * (B1:B0) -> 128 bits
    asm("mul.lo.u32 %0, %4, %6;\n\t"
        "mul.hi.u32 %1, %4, %6;\n\t"
        "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
        "madc.hi.u32 %2, %4, %7, 0;\n\t"
        "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
        "madc.hi.cc.u32 %2, %5, %6, %2;\n\t"
        "addc.u32 %3, 0, 0;\n\t"
        "mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
        "madc.hi.u32 %3, %5, %7, %3;"
        : "=&r"(s0), "=&r"(s1), "=&r"(s2), "=&r"(s3)
        : "r"(A[0]), "r"(A[1]), "r"(B[0]), "r"(B[1]));
    prod[4 * i] = s0; prod[4 * i + 1] = s1; prod[4 * i + 2] = s2; prod[4 * i + 3] = s3;
}
