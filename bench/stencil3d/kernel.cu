// One step of a 7-point stencil on an nx x ny x nz grid (x fastest):
// interior points become c0 * centre + c1 * (sum of the 6 neighbours), the
// boundary is copied. Each thread owns one (x, y) column and marches along
// z, so consecutive threads of a warp touch consecutive x.
extern "C" __global__ void stencil3d(float* out, const float* in, int nx, int ny, int nz, float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int plane = nx * ny;
    bool edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    for (int z = 0; z < nz; z++) {
        int i = z * plane + y * nx + x;
        if (edge || z == 0 || z == nz - 1)
            out[i] = in[i];
        else
            out[i] = c0 * in[i] + c1 * ((in[i - 1] + in[i + 1]) + (in[i - nx] + in[i + nx])
                                        + (in[i - plane] + in[i + plane]));
    }
}
