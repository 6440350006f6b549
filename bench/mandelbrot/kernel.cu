// Mandelbrot escape counts on a W x H grid (divergent loops).
extern "C" __global__ void mandelbrot(int* out, int w, int h, int max_iter)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cx = -2.0f + 2.5f * px / w, cy = -1.25f + 2.5f * py / h;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < max_iter && x * x + y * y <= 4.0f) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        it++;
    }
    out[py * w + px] = it;
}
