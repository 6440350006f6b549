// Tiled transpose through shared memory (16x16 tiles, +1 padding), 2-D grid, sizes not multiples of 16.
#define T 16
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
