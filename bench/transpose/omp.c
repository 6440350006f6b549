#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
/* Cache-blocked transpose through a 32x32 tile: the threads share out the
 * tiles; each tile is read row by row from `in` into a local buffer,
 * transposed, and written row by row to `out`, so both sides are
 * unit-stride (reading or writing a column directly at a 16 KiB stride
 * thrashes the L1 sets). */
#define B 32
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
                float tile[B][B]; /* tile[x][y] */
                int ny = h - yb < B ? h - yb : B, nx = w - xb < B ? w - xb : B;
                for (int y = 0; y < ny; y++) {
                    const float* src = in + (long)(yb + y) * w + xb;
                    #pragma omp simd
                    for (int x = 0; x < nx; x++) tile[x][y] = src[x];
                }
                for (int x = 0; x < nx; x++) {
                    float* dst = out + (long)(xb + x) * h + yb;
                    #pragma omp simd
                    for (int y = 0; y < ny; y++) dst[y] = tile[x][y];
                }
            }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += out[i];
    wf_dump(out, (n) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
