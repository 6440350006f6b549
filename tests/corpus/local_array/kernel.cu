// Per-thread array indexed with data-dependent indices (forces .local memory).
extern "C" __global__ void local_arr(const int* idx, int* out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int a[24];
    for (int k = 0; k < 24; k++) a[k] = t * 100 + k;
    for (int k = 0; k < 8; k++) { int j = idx[t * 8 + k] % 24; a[j] += a[(j + 7) % 24] * 3; }
    int s = 0;
    for (int k = 0; k < 8; k++) s = s * 31 + a[idx[t * 8 + (7 - k)] % 24];
    out[t] = s;
}
