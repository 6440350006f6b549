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

// Per-block histograms in shared memory: bins from the low byte of each
// `bytes` input (a byte loaded into a 64-bit register, shifted) and from
// bits 8-13 of each `words` input (a masked 32-bit index), counted with
// shared atomics and copied out per block.
extern "C" __global__ void shared_bins(int* out_bytes, int* out_ints, const int* bytes,
                                       const int* words, int n)
{
    __shared__ int hb[256];
    __shared__ int hi[64];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) hb[b] = 0;
    for (int b = threadIdx.x; b < 64; b += blockDim.x) hi[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hb[bytes[i] & 255], 1);
        atomicAdd(&hi[((unsigned)words[i] >> 8) % 64], i);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) out_bytes[blockIdx.x * 256 + b] = hb[b];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) out_ints[blockIdx.x * 64 + b] = hi[b];
}

// Bins through indices loaded from memory and used straight away: the
// compiled backend reads each lane's index again in scalar code (see
// warpfold-cpu's `Indexed::replay`), where nothing can have changed it.
// `again` is `idx` itself in the tests: the first count must use the word
// loaded, not the one stored over it before the atomic.
extern "C" __global__ void loaded_bins(int* out, const unsigned char* bytes, const unsigned* idx,
                                       unsigned* again, const unsigned* other, int n)
{
    __shared__ int hb[256];
    __shared__ int hw[64];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) hb[b] = 0;
    for (int b = threadIdx.x; b < 64; b += blockDim.x) hw[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned w = idx[i];
        again[i] = 7;
        atomicAdd(&hw[w], 1);
        atomicAdd(&hb[bytes[4 * i + 1]], 2);
        atomicAdd(&hw[other[i]], 4);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) out[blockIdx.x * 320 + b] = hb[b];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) out[blockIdx.x * 320 + 256 + b] = hw[b];
}

// The same bins, but each index loaded is also stored: a second read of
// it could differ from the first (another thread may write the word in
// between), so the compiled backend must take the index from the load.
extern "C" __global__ void kept_bins(int* out, const unsigned* other, unsigned* seen, int n)
{
    __shared__ int hw[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) hw[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned w = other[i];
        atomicAdd(&hw[w], 4);
        seen[i] = w;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x) out[blockIdx.x * 64 + b] = hw[b];
}
