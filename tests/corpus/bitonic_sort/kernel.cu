// Bitonic sort of 256 keys per block in shared memory.
extern "C" __global__ void bitonic(int* data)
{
    __shared__ int s[256];
    int t = threadIdx.x; int* d = data + blockIdx.x * 256;
    s[t] = d[t];
    __syncthreads();
    for (int k = 2; k <= 256; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            int p = t ^ j;
            if (p > t) {
                int a = s[t], b = s[p];
                bool up = (t & k) == 0;
                if ((a > b) == up) { s[t] = b; s[p] = a; }
            }
            __syncthreads();
        }
    }
    d[t] = s[t];
}
