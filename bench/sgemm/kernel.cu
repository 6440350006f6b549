// C = A * B for row-major A (M x K), B (K x N), C (M x N). Each 16x16
// block computes one 16x16 tile of C, staging 16x16 tiles of A and B
// through shared memory; one output element per thread.
#define T 16
extern "C" __global__ void sgemm(float* c, const float* a, const float* b, int m, int n, int k)
{
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * T + tx, row = blockIdx.y * T + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += T) {
        as[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0f;
        bs[ty][tx] = k0 + ty < k && col < n ? b[(k0 + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) acc += as[ty][j] * bs[j][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
