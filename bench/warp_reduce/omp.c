#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    long nw = (n + 31) / 32;
    float *in = aligned_alloc(64, n * 4), *out = aligned_alloc(64, nw * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) in[i] = wf_init("hash", i);
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (long w = 0; w < nw; w++) {
            float s = 0;
            long e = w * 32 + 32 < n ? w * 32 + 32 : n;
            #pragma omp simd reduction(+:s)
            for (long i = w * 32; i < e; i++) s += in[i];
            out[w] = s;
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < nw; i++) sum += out[i];
    wf_dump(out, (nw) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
