// A tiled matrix product (blocks of 16 x up to 16 threads) whose inner product between the two
// barriers is straight-line code of dependent FMAs: the compiled backend
// runs that region for two warps at once, their instructions interleaved
// (crates/cpu/src/warp_pairs.rs). Each thread also writes a word of its
// own into shared memory in the region and reads its neighbour's in the
// same warp (a warp's accesses keep their order: as on a GPU, where a warp
// runs in lock step), and the result mixes in a division and a square
// root, so every kind of float rounding shows in the bits.
#define T 16
extern "C" __global__ void tile_product(float* c, const float* a, const float* b, int n)
{
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    __shared__ float own[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * T + tx, row = blockIdx.y * blockDim.y + ty;
    float acc = 0.0f, mix = 1.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
        as[ty][tx] = row < n && k0 + tx < n ? a[row * n + k0 + tx] : 0.0f;
        // (every row of the b tile, for blocks of fewer than 16 rows too)
        for (int r = ty; r < T; r += blockDim.y)
            bs[r][tx] = k0 + r < n && col < n ? b[(k0 + r) * n + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int j = 0; j < T; j++) acc = fmaf(as[ty][j], bs[j][tx], acc);
        own[ty][tx] = acc * 0.5f;
        mix = mix * 0.75f + own[ty][tx ^ 1] / (1.0f + sqrtf(fabsf(acc)));
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc + mix;
}
