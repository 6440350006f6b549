/* A small OpenCL host for the benchmarks: builds KERNEL from FILE, makes
 * buffers from the argument specs (same syntax as bench.toml), runs one
 * warm-up and REPS timed launches, prints the median and the checksum of
 * one output buffer.
 *   ocl_host FILE KERNEL GX GY GZ LX LY LZ REPS OUT ARG...
 *   ARG := buf:f32:N:INIT | buf:i32:N:INIT | f32:V | i32:V        */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include "init.h"

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "OpenCL error %d at %s:%d\n", e_, __FILE__, __LINE__); exit(1); } } while (0)

int main(int argc, char **argv)
{
    if (argc < 12) { fprintf(stderr, "usage: ocl_host FILE KERNEL GX GY GZ LX LY LZ REPS OUT ARG...\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END); long len = ftell(f); fseek(f, 0, SEEK_SET);
    char *src = malloc(len + 1); fread(src, 1, len, f); src[len] = 0; fclose(f);
    size_t gsz[3], lsz[3];
    for (int i = 0; i < 3; i++) { gsz[i] = strtoul(argv[3 + i], 0, 10); lsz[i] = strtoul(argv[6 + i], 0, 10); }
    int reps = atoi(argv[9]), out = atoi(argv[10]);
    cl_platform_id plat; cl_device_id dev; cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err); CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err); CHECK(err);
    /* The work-group size as WG_SIZE, for kernels that size local arrays by it. */
    char opts[64];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DWG_SIZE=%lu", (unsigned long)(lsz[0] * lsz[1] * lsz[2]));
    if (clBuildProgram(prog, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
        char log[65536]; clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log); return 1;
    }
    cl_kernel k = clCreateKernel(prog, argv[2], &err); CHECK(err);
    int nargs = argc - 11;
    cl_mem *bufs = calloc(nargs, sizeof *bufs); long *lens = calloc(nargs, sizeof *lens); int *isint = calloc(nargs, sizeof *isint);
    for (int a = 0; a < nargs; a++) {
        char *s = argv[11 + a];
        if (!strncmp(s, "buf:", 4)) {
            char ty[8], init[16]; long n;
            sscanf(s, "buf:%3[^:]:%ld:%15s", ty, &n, init);
            isint[a] = !strcmp(ty, "i32"); lens[a] = n;
            void *h = malloc(n * 4);
            for (long i = 0; i < n; i++) {
                if (isint[a]) ((int *)h)[i] = (int)(wf_init(init, i) * 1024.0f);
                else ((float *)h)[i] = wf_init(init, i);
            }
            bufs[a] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, h, &err); CHECK(err);
            free(h);
            CHECK(clSetKernelArg(k, a, sizeof(cl_mem), &bufs[a]));
        } else if (!strncmp(s, "f32:", 4)) {
            float v = strtof(s + 4, 0); CHECK(clSetKernelArg(k, a, sizeof v, &v));
        } else if (!strncmp(s, "i32:", 4)) {
            int v = atoi(s + 4); CHECK(clSetKernelArg(k, a, sizeof v, &v));
        } else { fprintf(stderr, "bad arg %s\n", s); return 2; }
    }
    double *t = malloc(sizeof(double) * (reps + 1));
    for (int r = 0; r <= reps; r++) {
        double t0 = wf_now_ms();
        CHECK(clEnqueueNDRangeKernel(q, k, 3, NULL, gsz, lsz, 0, NULL, NULL));
        CHECK(clFinish(q));
        t[r] = wf_now_ms() - t0;
    }
    double med = wf_median(t + 1, reps);
    long n = lens[out];
    void *h = malloc(n * 4);
    CHECK(clEnqueueReadBuffer(q, bufs[out], CL_TRUE, 0, n * 4, h, 0, NULL, NULL));
    double sum = 0;
    /* WF_CHECKSUM=weighted: weight each element by its position. */
    const char *mode = getenv("WF_CHECKSUM");
    int weighted = mode && !strcmp(mode, "weighted");
    for (long i = 0; i < n; i++)
        sum += (isint[out] ? ((int *)h)[i] : ((float *)h)[i]) * (weighted ? wf_weight(i) : 1.0);
    wf_dump(h, n * 4);
    printf("median_ms=%.6f checksum=%.17g\n", med, sum);
    return 0;
}
