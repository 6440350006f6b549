// Inclusive prefix sums of each block's 256 inputs (no carry between
// blocks): Hillis-Steele in shared memory, log2(256) = 8 steps of two
// barriers each (read the partner, then add).
#define B 256
extern "C" __global__ void block_scan(const float* in, float* out, int n)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int d = 1; d < B; d <<= 1) {
        float v = t >= d ? s[t - d] : 0.0f;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    if (i < n) out[i] = s[t];
}
