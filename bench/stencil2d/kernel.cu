// One Jacobi step of the 2-D Laplace equation on a w x h grid: every
// interior point becomes the mean of its 4 neighbours, the boundary is
// copied. Neighbour reuse is left to the caches.
extern "C" __global__ void jacobi2d(float* out, const float* in, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        out[i] = in[i];
    else
        out[i] = 0.25f * ((in[i - w] + in[i + w]) + (in[i - 1] + in[i + 1]));
}
