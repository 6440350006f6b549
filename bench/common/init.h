/* Deterministic inputs and checksums shared by the OpenMP and OpenCL
 * versions of the benchmarks; warpfold's harness computes the same. */
#ifndef WF_BENCH_INIT_H
#define WF_BENCH_INIT_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline float wf_init(const char *kind, long i)
{
    if (!strcmp(kind, "ramp")) return (float)(i % 1024) / 1024.0f;
    if (!strcmp(kind, "ones")) return 1.0f;
    if (!strcmp(kind, "hash")) return (float)((((uint32_t)i * 2654435761u) >> 16) & 1023u) / 1024.0f;
    return 0.0f;
}

/* Position weight of the "weighted" checksum (it depends on the order of
 * the outputs, not only their sum). */
static inline double wf_weight(long i)
{
    return (double)(i % 16 + 1);
}

/* WF_DUMP=PATH: the output array's bytes go there too, for the harness's
 * element-by-element comparison (a sum hides errors on a few elements). */
static inline void wf_dump(const void *p, long bytes)
{
    const char *path = getenv("WF_DUMP");
    if (!path) return;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, (size_t)bytes, f) != (size_t)bytes || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static inline double wf_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int wf_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of n timings (sorts in place). */
static inline double wf_median(double *t, int n)
{
    qsort(t, n, sizeof *t, wf_cmp);
    return t[n / 2];
}
#endif
