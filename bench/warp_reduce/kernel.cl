/* Per-"warp" sums of 32 consecutive floats. The CUDA version uses
 * __shfl_down_sync; sub-group shuffles (cl_khr_subgroup_shuffle) are not
 * reliably available in POCL, so this version reduces each 32-element
 * segment of the work-group in local memory with barriers instead, using
 * the same d = 16, 8, 4, 2, 1 tree, so it adds in the same order. */
__kernel void warp_sum(__global const float* in, __global float* out, int n)
{
    __local float s[256];
    int t = get_local_id(0), i = get_global_id(0), lane = t & 31;
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 16; d > 0; d >>= 1) {
        if (lane < d) s[t] += s[t + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && i < n) out[i >> 5] = s[t];
}
