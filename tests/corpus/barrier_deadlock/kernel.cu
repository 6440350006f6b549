// Error case: warp 0 waits on barrier 0 (__syncthreads) while warp 1 waits on barrier 1, which
// needs all threads of the CTA. Neither barrier can ever complete: a deadlock on any GPU.
extern "C" __global__ void deadlock(int* out)
{
    int t = threadIdx.x;
    if (t < 32) {
        __syncthreads();
    } else {
        asm volatile("bar.sync 1;" ::: "memory");
    }
    out[t] = t;
}
