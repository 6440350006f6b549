#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "../common/init.h"
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    float* out = aligned_alloc(64, n * 4);
    const float m = 0.999f, c = 0.001f;
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for simd
        for (long i = 0; i < n; i++) {
            /* The index as int, as in the CUDA version: int to float
               converts in vector registers on every x86 (long to float
               needs AVX-512DQ, and gcc leaves the loop scalar without). */
            float x0 = (int)i * 1e-6f, x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
            float x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
            for (int k = 0; k < 512; k++) {
                x0 = fmaf(x0, m, c); x1 = fmaf(x1, m, c); x2 = fmaf(x2, m, c); x3 = fmaf(x3, m, c);
                x4 = fmaf(x4, m, c); x5 = fmaf(x5, m, c); x6 = fmaf(x6, m, c); x7 = fmaf(x7, m, c);
            }
            out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += out[i];
    wf_dump(out, (n) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
