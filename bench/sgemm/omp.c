#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "../common/init.h"
/* i-k-j order: the inner loop streams a row of B into a row of C with a
 * broadcast of A[i][k], unit-stride and vectorised. K is blocked so a
 * KB x N panel of B (256 KiB) stays in L2 while a block of rows uses it;
 * the C row being accumulated stays in L1. */
#define KB 128
#define IB 16
int main(int argc, char** argv)
{
    long n = atol(argv[1]); int reps = atoi(argv[2]);
    const int M = 512, N = 512, K = (int)(n / 512);
    float *a = aligned_alloc(64, (long)M * K * 4), *b = aligned_alloc(64, (long)K * N * 4);
    float *c = aligned_alloc(64, (long)M * N * 4);
    for (long i = 0; i < (long)M * K; i++) a[i] = wf_init("ramp", i);
    for (long i = 0; i < (long)K * N; i++) b[i] = wf_init("hash", i);
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (int i0 = 0; i0 < M; i0 += IB) {
            for (int i = i0; i < i0 + IB; i++)
                for (int j = 0; j < N; j++) c[(long)i * N + j] = 0.0f;
            for (int k0 = 0; k0 < K; k0 += KB)
                for (int i = i0; i < i0 + IB; i++) {
                    float* restrict ci = c + (long)i * N;
                    for (int kk = k0; kk < k0 + KB && kk < K; kk++) {
                        const float aik = a[(long)i * K + kk];
                        const float* restrict bk = b + (long)kk * N;
                        #pragma omp simd
                        for (int j = 0; j < N; j++) ci[j] += aik * bk[j];
                    }
                }
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0; for (long i = 0; i < (long)M * N; i++) sum += c[i];
    wf_dump(c, ((long)M * N) * (long)sizeof *c);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
