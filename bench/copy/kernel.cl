__kernel void copy(__global float* a, __global const float* b, int n)
{
    int i = get_global_id(0);
    if (i < n) a[i] = b[i];
}
