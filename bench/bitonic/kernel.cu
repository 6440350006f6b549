// Bitonic sort of independent 1024-key segments: each block of 512 threads
// loads one segment into shared memory (two keys per thread), runs the
// bitonic network (every thread one compare-exchange per step, a barrier
// between steps) and writes the segment back in ascending order.
#define SEG 1024
extern "C" __global__ void bitonic(const float* in, float* out, int n)
{
    __shared__ float s[SEG];
    int base = blockIdx.x * SEG, t = threadIdx.x;
    s[t] = in[base + t];
    s[t + SEG / 2] = in[base + t + SEG / 2];
    for (int size = 2; size <= SEG; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            int pos = 2 * t - (t & (stride - 1));
            bool descending = (t & (size / 2)) != 0;
            float a = s[pos], b = s[pos + stride];
            if ((a > b) != descending) {
                s[pos] = b;
                s[pos + stride] = a;
            }
        }
    }
    __syncthreads();
    out[base + t] = s[t];
    out[base + t + SEG / 2] = s[t + SEG / 2];
}
