// Bit intrinsics: __brev, __brevll, __clz, __clzll, __popc, __popcll, __ffs, __ffsll,
// __byte_perm, __funnelshift_l/r (wrap) and _lc/_rc (clamp).
extern "C" __global__ void bits(int n, const unsigned* x, const unsigned* y, const unsigned* s,
                                const unsigned long long* X, unsigned* out, unsigned long long* out64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[i], b = y[i], c = s[i];
    unsigned long long L = X[i];
    unsigned* o = out + i * 13;
    o[0] = __brev(a);
    o[1] = __clz((int)a);
    o[2] = __popc(a);
    o[3] = __ffs((int)a);
    o[4] = __byte_perm(a, b, c & 0x7777u);
    o[5] = __funnelshift_l(a, b, c);
    o[6] = __funnelshift_r(a, b, c);
    o[7] = __funnelshift_lc(a, b, c);
    o[8] = __funnelshift_rc(a, b, c);
    o[9] = __clzll((long long)L);
    o[10] = __popcll(L);
    o[11] = __ffsll((long long)L);
    o[12] = a >> (c & 31u) | a << ((32u - (c & 31u)) & 31u);   // rotate idiom
    out64[i] = __brevll(L);
}
