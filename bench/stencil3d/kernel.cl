__kernel void stencil3d(__global float* out, __global const float* in, int nx, int ny, int nz, float c0, float c1)
{
    int x = get_global_id(0), y = get_global_id(1);
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
