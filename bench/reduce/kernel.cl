__kernel void block_sum(__global const float* in, __global float* out, int n)
{
    __local float s[256];
    int t = get_local_id(0), i = get_group_id(0) * 256 + t;
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 128; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) out[get_group_id(0)] = s[0];
}
