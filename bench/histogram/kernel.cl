#define BINS 256
__kernel void histogram(__global int* hist, __global const int* data, int n)
{
    __local int h[BINS];
    int t = get_local_id(0), bs = get_local_size(0);
    for (int b = t; b < BINS; b += bs) h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int stride = get_global_size(0);
    for (int i = get_global_id(0); i < n; i += stride)
        atomic_inc(&h[data[i] & (BINS - 1)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = t; b < BINS; b += bs) {
        int c = h[b];
        if (c) atomic_add(&hist[b], c);
    }
}
