__kernel void mandelbrot(__global int* out, int w, int h, int max_iter)
{
    int px = get_global_id(0), py = get_global_id(1);
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
