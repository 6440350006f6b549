// Kernels for the CTA order analysis (crates/cpu/src/cta_order.rs).
#define T 16
// C = A * B through 16x16 tiles: the A strip depends on blockIdx.y, the
// B strip on blockIdx.x. In line in each kernel (no call in the PTX).
__device__ __forceinline__ void tile_product(float* c, const float* a, const float* b, int m, int n, int k)
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
extern "C" __global__ void tiled_matmul(float* c, const float* a, const float* b, int m, int n, int k)
{
    tile_product(c, a, b, m, n, k);
}
// The same, also counting finished tiles with a global atomic.
extern "C" __global__ void tiled_matmul_counting(float* c, const float* a, const float* b, int m, int n, int k, int* done)
{
    tile_product(c, a, b, m, n, k);
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(done, 1);
}
// Each thread walks down its column of rows: its loads depend on both
// blockIdx.x and blockIdx.y.
extern "C" __global__ void stencil_rows(float* out, const float* in, int w, int h, int steps)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int t = 0; t < steps; t++) s += in[((y + t) % h) * w + x];
    out[y * w + x] = s;
}
