// 7-point 3-D stencil on a 3-D grid of 3-D blocks (8x4x2); boundary points copied.
extern "C" __global__ void stencil(const int* in, int* out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int id = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) { out[id] = in[id]; return; }
    out[id] = 6 * in[id] - in[id - 1] - in[id + 1] - in[id - nx] - in[id + nx] - in[id - nx * ny] - in[id + nx * ny];
}
