// Directed rounding on subnormal operands/results via inline PTX without .ftz
// (inline asm is not affected by --use_fast_math, so all variants must be exact).
#define OP2(I, ins) asm(ins " %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); o[I] = r;
#define OP3(I, ins) asm(ins " %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c)); o[I] = r;
#define OP1(I, ins) asm(ins " %0, %1;" : "=f"(r) : "f"(a)); o[I] = r;
extern "C" __global__ void dirsub(int n, const float* x, const float* y, const float* z, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], c = z[i], r;
    float* o = out + i * 24;
    OP2(0, "add.rn.f32") OP2(1, "add.rz.f32") OP2(2, "add.rm.f32") OP2(3, "add.rp.f32")
    OP2(4, "mul.rn.f32") OP2(5, "mul.rz.f32") OP2(6, "mul.rm.f32") OP2(7, "mul.rp.f32")
    OP3(8, "fma.rn.f32") OP3(9, "fma.rz.f32") OP3(10, "fma.rm.f32") OP3(11, "fma.rp.f32")
    OP2(12, "div.rn.f32") OP2(13, "div.rz.f32") OP2(14, "div.rm.f32") OP2(15, "div.rp.f32")
    OP1(16, "sqrt.rn.f32") OP1(17, "sqrt.rz.f32") OP1(18, "sqrt.rm.f32") OP1(19, "sqrt.rp.f32")
    OP1(20, "rcp.rn.f32") OP1(21, "rcp.rz.f32") OP1(22, "rcp.rm.f32") OP1(23, "rcp.rp.f32")
}
