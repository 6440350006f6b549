// All-pairs gravitational accelerations with Plummer softening:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2).
// Each block stages 256 bodies at a time in shared memory and every thread
// accumulates the accelerations of its body against the whole tile.
#define TB 256
extern "C" __global__ void nbody(float4* acc, const float4* pos, int n, float eps2)
{
    __shared__ float4 sh[TB];
    int i = blockIdx.x * TB + threadIdx.x;
    float4 pi = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int t0 = 0; t0 < n; t0 += TB) {
        int j = t0 + threadIdx.x;
        // a padding body has mass 0 and adds nothing
        sh[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < TB; k++) {
            float4 pj = sh[k];
            float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(d2);
            float s = pj.w * inv * inv * inv;
            ax += s * dx; ay += s * dy; az += s * dz;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.0f);
}
