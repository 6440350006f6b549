// clock()/clock64() are monotonic per thread: only non-negative deltas are checked.
extern "C" __global__ void clk(const int* x, int* out)
{
    int t = threadIdx.x;
    long long a = clock64();
    unsigned c0 = (unsigned)clock();
    int s = 0;
    for (int k = 0; k < (t & 7) + 1; k++) s += x[(t + k) & 63];
    long long b = clock64();
    unsigned c1 = (unsigned)clock();
    out[t * 3] = (b - a) >= 0;
    out[t * 3 + 1] = (int)(c1 - c0) >= 0;     // 32-bit counter, assumes no wrap within the kernel
    out[t * 3 + 2] = s;
}
