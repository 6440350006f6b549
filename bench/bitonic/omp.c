#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "../common/init.h"
/* Bitonic sort of independent 1024-key segments: the threads share out the
 * segments; each runs the same network in a local copy, every step one
 * branch-free (min/max) loop over the 512 compare-exchanges that gcc
 * vectorises. */
#define SEG 1024
int main(int argc, char** argv)
{
    /* argv[1] is the GPU versions' thread count: two keys per thread */
    long n = 2 * atol(argv[1]); int reps = atoi(argv[2]);
    long nseg = n / SEG;
    float *in = aligned_alloc(64, n * 4), *out = aligned_alloc(64, n * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) { in[i] = wf_init("hash", i); out[i] = 0; }
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (long g = 0; g < nseg; g++) {
            float s[SEG] __attribute__((aligned(64)));
            memcpy(s, in + g * SEG, sizeof s);
            for (int size = 2; size <= SEG; size <<= 1)
                for (int stride = size / 2; stride > 0; stride >>= 1) {
                    #pragma omp simd
                    for (int k = 0; k < SEG / 2; k++) {
                        int pos = 2 * k - (k & (stride - 1));
                        int descending = (k & (size / 2)) != 0;
                        float a = s[pos], b = s[pos + stride];
                        float lo = a < b ? a : b, hi = a < b ? b : a;
                        s[pos] = descending ? hi : lo;
                        s[pos + stride] = descending ? lo : hi;
                    }
                }
            memcpy(out + g * SEG, s, sizeof s);
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0;
    for (long i = 0; i < n; i++) sum += out[i] * wf_weight(i);
    wf_dump(out, (n) * (long)sizeof *out);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
