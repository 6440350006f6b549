#define B 256
__kernel void block_scan(__global const float* in, __global float* out, int n)
{
    __local float s[B];
    int t = get_local_id(0), i = get_group_id(0) * B + t;
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < B; d <<= 1) {
        float v = t >= d ? s[t - d] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[t] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) out[i] = s[t];
}
