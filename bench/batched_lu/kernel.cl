// Batched LU factorisation and solve of 16x16 systems (see kernel.cu).
// OpenCL 1.2 has no shuffles: the pivot row and the solved unknowns are
// broadcast through local memory, one slot per matrix of the work-group.
#define N 16
#define WG WG_SIZE
__kernel void lu_solve(__global const float* A, __global const float* b, __global float* x, int batch)
{
    __local float piv[WG / N][N];
    __local float vk[WG / N];
    int gid = get_global_id(0), lid = get_local_id(0);
    int m = gid / N, i = gid % N, g = lid / N;
    float a[N];
    for (int j = 0; j < N; j++) a[j] = A[((long)m * N + i) * N + j] + (j == i ? (float)N : 0.0f);
    float y = b[m * N + i];
    for (int k = 0; k < N; k++) {
        if (i == k)
            for (int j = 0; j < N; j++) piv[g][j] = a[j];
        barrier(CLK_LOCAL_MEM_FENCE);
        float l = a[k] / piv[g][k];
        if (i > k) {
            for (int j = k + 1; j < N; j++) a[j] -= l * piv[g][j];
            a[k] = l;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int k = 0; k < N; k++) {
        if (i == k) vk[g] = y;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i > k) y -= a[k] * vk[g];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float xi = 0.0f;
    for (int k = N - 1; k >= 0; k--) {
        if (i == k) { xi = y / a[k]; vk[g] = xi; }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i < k) y -= a[k] * vk[g];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    x[m * N + i] = xi;
}
