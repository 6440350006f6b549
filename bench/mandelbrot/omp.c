#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    int w = 1024, h = (int)(n / w), max_iter = 256;
    int* out = aligned_alloc(64, n * 4);
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(dynamic, 4)
        for (int py = 0; py < h; py++)
            for (int px = 0; px < w; px++) {
                float cx = -2.0f + 2.5f * px / w, cy = -1.25f + 2.5f * py / h;
                float x = 0.0f, y = 0.0f;
                int it = 0;
                while (it < max_iter && x * x + y * y <= 4.0f) {
                    float tt = x * x - y * y + cx;
                    y = 2.0f * x * y + cy;
                    x = tt;
                    it++;
                }
                out[py * w + px] = it;
            }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += out[i];
    wf_dump(out, (n) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
