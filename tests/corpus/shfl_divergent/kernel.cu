// Shuffles inside divergent branches, masks from __activemask() (assumed: the whole branch is converged)
extern "C" __global__ void shfl_div(const int* x, int* out, unsigned* masks)
{
    int t = threadIdx.x, lane = t & 31;
    int v = x[t], r;
    if (lane < 20) {
        unsigned m = __activemask();
        masks[t] = m;
        r = __shfl_sync(m, v, (lane * 7 + 3) % 20);
    } else {
        unsigned m = __activemask();
        masks[t] = m;
        r = __shfl_down_sync(m, v, 2);   // lanes 30, 31 get their own value
    }
    out[t] = r;
}
