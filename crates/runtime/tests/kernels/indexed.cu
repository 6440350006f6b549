// Loads and stores through indices read from memory (no lane form): the
// compiled backend tests whether a warp's 32-bit indices are consecutive
// before it widens them (see warpfold-cpu's `indexed`). Each thread reads
// x[j] and x[u] (j signed, u unsigned) and xd[j], and writes its number
// to back[j] and to backd[u].
extern "C" __global__ void gather_scatter(float* out, double* outd, float* back, double* backd,
                                          const float* x, const double* xd, const int* idx,
                                          const unsigned* uidx, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int j = idx[t];
    unsigned u = uidx[t];
    out[t] = x[j] * 2.0f + x[u];
    outd[t] = xd[j] - 1.0;
    back[j] = (float)t;
    backd[u] = (double)t;
}
