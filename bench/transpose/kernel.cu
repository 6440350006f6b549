// Out-of-place transpose of a w x h matrix (row-major) into h x w, through
// a 32x32 shared-memory tile padded to 33 columns (no bank conflicts on the
// column-wise read). Each 32x8 block moves one tile, 4 rows per thread, so
// both the global read and the global write are coalesced.
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose(float* out, const float* in, int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
