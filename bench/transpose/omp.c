#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
/* Cache-blocked transpose: each thread takes whole 64x64 blocks, so one
 * block's rows of `in` and of `out` both stay in L1 while it is moved. */
#define B 64
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    const int w = 4096, h = (int)(n / w);
    float *in = aligned_alloc(64, n * 4), *out = aligned_alloc(64, n * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) { out[i] = 0; in[i] = wf_init("hash", i); }
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for collapse(2) schedule(static)
        for (int yb = 0; yb < h; yb += B)
            for (int xb = 0; xb < w; xb += B) {
                int ye = yb + B < h ? yb + B : h, xe = xb + B < w ? xb + B : w;
                for (int x = xb; x < xe; x++) {
                    float* o = out + (long)x * h;
                    #pragma omp simd
                    for (int y = yb; y < ye; y++) o[y] = in[(long)y * w + x];
                }
            }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += out[i];
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
