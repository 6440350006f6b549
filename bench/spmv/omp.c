#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
/* CSR SpMV over rows, the rows split statically between threads; the 16
 * nonzeros of a row are added in order. The column indices are computed
 * ((row + 37 k) mod n) instead of loaded, as in the GPU versions; x is
 * gathered. Rows near the end wrap around, the others need no test. */
#define NNZ 16
#define STEP 37
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    float *y = aligned_alloc(64, n * 4), *val = aligned_alloc(64, n * NNZ * 4), *x = aligned_alloc(64, n * 4);
    #pragma omp parallel for
    for (long i = 0; i < n; i++) {
        y[i] = 0; x[i] = wf_init("hash", i);
        for (int k = 0; k < NNZ; k++) val[i * NNZ + k] = wf_init("ramp", i * NNZ + k);
    }
    const long wrap = n - (NNZ - 1) * STEP; /* rows from here on wrap */
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (long row = 0; row < n; row++) {
            const float* v = val + row * NNZ;
            float acc = 0.0f;
            if (row < wrap) {
                const float* xr = x + row;
                for (int k = 0; k < NNZ; k++) acc += v[k] * xr[k * STEP];
            } else {
                for (int k = 0; k < NNZ; k++) {
                    long col = row + k * STEP;
                    if (col >= n) col -= n;
                    acc += v[k] * x[col];
                }
            }
            y[row] = acc;
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < n; i++) sum += y[i];
    wf_dump(y, (n) * (long)sizeof *y);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
