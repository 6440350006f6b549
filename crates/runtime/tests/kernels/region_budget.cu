// Kernel for crates/runtime/tests/unrolled_rounds.rs. Regenerate the PTX with
//   warpfold inspect region_budget.cu --emit ptx > region_budget.ptx

// The suite's block scan without its bounds tests (every thread has an
// input): 17 barriers, each with a region of its own. Without the tests'
// branches the general warp function is small, and region functions used
// to be held to twice its size: the last two barriers got none.
#define B 256
extern "C" __global__ void scan_unguarded(const float* in, float* out)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = in[i];
    __syncthreads();
    for (int d = 1; d < B; d <<= 1) {
        float v = t >= d ? s[t - d] : 0.0f;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    out[i] = s[t];
}
