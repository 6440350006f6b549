// char/short sign and zero extension, truncation to narrow types, mixed-width arithmetic.
extern "C" __global__ void ext(int n, const signed char* c, const unsigned char* uc, const short* s,
                               const unsigned short* us, const int* w, int* out, signed char* oc, short* os)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int* o = out + i * 10;
    o[0] = c[i];                 // sign extend s8
    o[1] = uc[i];                // zero extend u8
    o[2] = s[i];                 // sign extend s16
    o[3] = us[i];                // zero extend u16
    o[4] = (signed char)w[i];    // truncate + sign extend
    o[5] = (unsigned char)w[i];
    o[6] = (short)w[i];
    o[7] = (unsigned short)w[i];
    o[8] = (int)(unsigned)(unsigned char)c[i] + c[i];
    o[9] = (short)(s[i] * 3) >> 2;
    oc[i] = (signed char)(c[i] + uc[i]);
    os[i] = (short)(s[i] + us[i] * 2);
}
