#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
/* Inclusive prefix sums within each block of 256 (no carry between
 * blocks). The blocks are independent, so the threads share them out;
 * within a block the running sum is an OpenMP inscan reduction. */
#define B 256
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    long nb = (n + B - 1) / B;
    float *in = aligned_alloc(64, n * 4), *out = aligned_alloc(64, n * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) { out[i] = 0; in[i] = wf_init("hash", i); }
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (long b = 0; b < nb; b++) {
            long e = (b + 1) * B < n ? (b + 1) * B : n;
            float s = 0.0f;
            #pragma omp simd reduction(inscan, +:s)
            for (long i = b * B; i < e; i++) {
                s += in[i];
                #pragma omp scan inclusive(s)
                out[i] = s;
            }
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += out[i];
    wf_dump(out, (n) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
