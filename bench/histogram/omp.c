#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "../common/init.h"
/* Each thread counts its contiguous share of the input into private
 * histograms, then merges them into the shared one with one atomic add
 * per bin. Four interleaved sub-histograms per thread break the
 * store-to-load dependency when neighbouring inputs fall in the same bin.
 * Like the GPU versions the shared bins accumulate over runs. */
#define BINS 256
#define ITEMS 64 /* elements per launched GPU thread (see bench.toml) */
int main(int argc, char** argv)
{
    long n = atol(argv[1]) * ITEMS; int reps = atoi(argv[2]);
    int *data = aligned_alloc(64, n * 4), *hist = aligned_alloc(64, BINS * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) data[i] = (int)(wf_init("hash", i) * 1024.0f);
    memset(hist, 0, BINS * 4);
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel
        {
            int p[4][BINS] __attribute__((aligned(64)));
            memset(p, 0, sizeof p);
            #pragma omp for schedule(static) nowait
            for (long i = 0; i < n - n % 4; i += 4) {
                p[0][data[i] & (BINS - 1)]++;
                p[1][data[i + 1] & (BINS - 1)]++;
                p[2][data[i + 2] & (BINS - 1)]++;
                p[3][data[i + 3] & (BINS - 1)]++;
            }
            #pragma omp single nowait
            for (long i = n - n % 4; i < n; i++) p[0][data[i] & (BINS - 1)]++;
            for (int b = 0; b < BINS; b++) {
                int c = p[0][b] + p[1][b] + p[2][b] + p[3][b];
                if (c) {
                    #pragma omp atomic
                    hist[b] += c;
                }
            }
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < BINS; i++) sum += hist[i];
    wf_dump(hist, (BINS) * (long)sizeof *hist);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
