#define T 16
__kernel void sgemm(__global float* c, __global const float* a, __global const float* b, int m, int n, int k)
{
    __local float as[T][T];
    __local float bs[T][T];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_group_id(0) * T + tx, row = get_group_id(1) * T + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += T) {
        as[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0f;
        bs[ty][tx] = k0 + ty < k && col < n ? b[(k0 + ty) * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < T; j++) acc += as[ty][j] * bs[j][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
