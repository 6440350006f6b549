// Integer arithmetic intrinsics: mul.hi, mul.wide, mad, mul24, sad, abs, min/max
// signed vs unsigned, halving adds.
extern "C" __global__ void int_arith(int n, const int* a, const int* b, const int* c,
                                     const long long* la, const long long* lb,
                                     unsigned* out, unsigned long long* out64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i], z = c[i];
    unsigned ux = x, uy = y, uz = z;
    unsigned* o = out + i * 16;
    o[0] = __mulhi(x, y);
    o[1] = __umulhi(ux, uy);
    o[2] = __mul24(x, y);
    o[3] = __umul24(ux, uy);
    o[4] = __sad(x, y, uz);
    o[5] = __usad(ux, uy, uz);
    o[6] = abs(x);
    o[7] = min(x, y);
    o[8] = max(x, y);
    o[9] = min(ux, uy);
    o[10] = max(ux, uy);
    o[11] = ux * uy + uz;            // mad.lo
    o[12] = __mulhi(x, 1000003);     // mul.hi by constant
    o[13] = ux * 0x9E3779B9u;
    o[14] = __hadd(x, y);
    o[15] = __urhadd(ux, uy);
    unsigned long long* q = out64 + i * 4;
    q[0] = (unsigned long long)((long long)x * (long long)y);   // mul.wide.s32
    q[1] = (unsigned long long)ux * (unsigned long long)uy;     // mul.wide.u32
    q[2] = (unsigned long long)__mul64hi(la[i], lb[i]);
    q[3] = __umul64hi((unsigned long long)la[i], (unsigned long long)lb[i]);
}
