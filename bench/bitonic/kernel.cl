// Bitonic sort of independent 1024-key segments (see kernel.cu).
#define SEG 1024
__kernel void bitonic(__global const float* in, __global float* out, int n)
{
    __local float s[SEG];
    int base = get_group_id(0) * SEG, t = get_local_id(0);
    s[t] = in[base + t];
    s[t + SEG / 2] = in[base + t + SEG / 2];
    for (int size = 2; size <= SEG; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            int pos = 2 * t - (t & (stride - 1));
            bool descending = (t & (size / 2)) != 0;
            float a = s[pos], b = s[pos + stride];
            if ((a > b) != descending) {
                s[pos] = b;
                s[pos + stride] = a;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[base + t] = s[t];
    out[base + t + SEG / 2] = s[t + SEG / 2];
}
