#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "../common/init.h"
/* Batched LU factorisation (no pivoting) and solve of 16x16 systems: the
 * threads share out the matrices; each is factorised in a local copy with
 * the row updates as 16-wide SIMD loops (one AVX-512 vector per row). */
#define N 16
int main(int argc, char** argv)
{
    /* argv[1] is the GPU versions' thread count: N per matrix */
    long batch = atol(argv[1]) / N; int reps = atoi(argv[2]);
    float *A = aligned_alloc(64, batch * N * N * 4), *b = aligned_alloc(64, batch * N * 4),
          *x = aligned_alloc(64, batch * N * 4);
    #pragma omp parallel for
    for (long i = 0; i < batch * N * N; i++) A[i] = wf_init("hash", i);
    for (long i = 0; i < batch * N; i++) { b[i] = wf_init("ramp", i); x[i] = 0; }
    double t[1000];
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        #pragma omp parallel for schedule(static)
        for (long m = 0; m < batch; m++) {
            float a[N][N] __attribute__((aligned(64))), y[N];
            memcpy(a, A + m * N * N, sizeof a);
            for (int i = 0; i < N; i++) { a[i][i] += (float)N; y[i] = b[m * N + i]; }
            for (int k = 0; k < N; k++)
                for (int i = k + 1; i < N; i++) {
                    float l = a[i][k] / a[k][k];
                    #pragma omp simd
                    for (int j = k + 1; j < N; j++) a[i][j] -= l * a[k][j];
                    a[i][k] = l;
                }
            for (int k = 0; k < N; k++)
                for (int i = k + 1; i < N; i++) y[i] -= a[i][k] * y[k];
            for (int k = N - 1; k >= 0; k--) {
                float xk = y[k] / a[k][k];
                x[m * N + k] = xk;
                for (int i = 0; i < k; i++) y[i] -= a[i][k] * xk;
            }
        }
        t[r] = wf_now_ms() - t0;
    }
    double sum = 0;
    for (long i = 0; i < batch * N; i++) sum += x[i] * wf_weight(i);
    wf_dump(x, (batch * N) * (long)sizeof *x);
    printf("median_ms=%.6f checksum=%.17g\n", wf_median(t + 1, reps), sum);
    return 0;
}
