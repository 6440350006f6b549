#define TB 256
__kernel void nbody(__global float4* acc, __global const float4* pos, int n, float eps2)
{
    __local float4 sh[TB];
    int t = get_local_id(0), i = get_group_id(0) * TB + t;
    float4 pi = i < n ? pos[i] : (float4)(0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int t0 = 0; t0 < n; t0 += TB) {
        int j = t0 + t;
        sh[t] = j < n ? pos[j] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TB; k++) {
            float4 pj = sh[k];
            float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrt(d2);
            float s = pj.w * inv * inv * inv;
            ax += s * dx; ay += s * dy; az += s * dz;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) acc[i] = (float4)(ax, ay, az, 0.0f);
}
