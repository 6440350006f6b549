// 64-bit integer vector ops: wrapping add/sub/mul, arithmetic and logical shifts,
// bitwise ops, signed compare, unsigned div/rem.
extern "C" __global__ void i64ops(int n, const long long* a, const long long* b,
                                  long long* out, unsigned long long* uout)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = a[i], y = b[i];
    unsigned s = (unsigned)y & 63u;
    unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
    out[i * 8 + 0] = (long long)(ux + uy);
    out[i * 8 + 1] = (long long)(ux - uy);
    out[i * 8 + 2] = (long long)(ux * uy);
    out[i * 8 + 3] = x >> s;                      // arithmetic
    out[i * 8 + 4] = (long long)(ux << s);
    out[i * 8 + 5] = x ^ y;
    out[i * 8 + 6] = x & ~y;
    out[i * 8 + 7] = (x < y) ? x : y;
    uout[i * 4 + 0] = ux >> s;                    // logical
    uout[i * 4 + 1] = ux * uy;
    uout[i * 4 + 2] = ux / (uy | 1ull);
    uout[i * 4 + 3] = ux % (uy | 1ull);
}
