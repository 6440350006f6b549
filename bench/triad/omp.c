#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    float *a = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4), *c = aligned_alloc(64, n * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) { a[i] = 0; b[i] = wf_init("ramp", i); c[i] = wf_init("hash", i); }
    const float s = 3.0f;
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for simd
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += a[i];
    wf_dump(a, (n) * (long)sizeof *a);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
