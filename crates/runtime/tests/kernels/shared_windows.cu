// Kernels for crates/runtime/tests/shared_windows.rs. Regenerate the PTX
// with
//   warpfold inspect shared_windows.cu --emit ptx > shared_windows.ptx

// Compare-exchange steps of a sorting network in shared memory: each
// thread reads two elements at positions known from its index (stride 1:
// every other element; stride 2: pairs of neighbours) and writes them back
// swapped where its data says so. 32- and 64-bit elements; with blocks
// that leave partial warps, the idle lanes must leave memory alone.
extern "C" __global__ void exchange(const unsigned* in, unsigned* out, unsigned long long* out64)
{
    __shared__ unsigned s[256];
    __shared__ unsigned long long d[256];
    int t = threadIdx.x;
    for (int i = t; i < 256; i += blockDim.x) {
        s[i] = in[i];
        d[i] = (unsigned long long)in[i] << 20 | i;
    }
    __syncthreads();
    for (int stride = 1; stride <= 2; stride <<= 1) {
        int pos = 2 * t - (t & (stride - 1));
        unsigned a = s[pos], b = s[pos + stride];
        if (a > b) {
            s[pos] = b;
            s[pos + stride] = a;
        }
        __syncthreads();
        unsigned long long x = d[pos], y = d[pos + stride];
        if ((x ^ y) & 0x100000) {
            d[pos] = y;
            d[pos + stride] = x;
        }
        __syncthreads();
    }
    for (int i = t; i < 256; i += blockDim.x) {
        out[i] = s[i];
        out64[i] = d[i];
    }
}
