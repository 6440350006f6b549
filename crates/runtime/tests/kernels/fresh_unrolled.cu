// Kernels for crates/runtime/tests/fresh_unrolled.rs. Regenerate the PTX with
//   warpfold inspect fresh_unrolled.cu --emit ptx > fresh_unrolled.ptx

// A small barrier-free kernel: the compiled backend runs its one round
// unrolled over the CTA's warps when every warp is full (see
// `FreshRound::Unrolled` in crates/cpu/src/emit.rs). Threads loop
// `trips[blockIdx.x] >> (t & 7)` times: long enough in some CTAs for the
// warps to yield and finish later through the round loop, and with lanes
// that leave the loop early.
extern "C" __global__ void spin_sum(const int* in, const int* trips, int* out)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int x = in[i], n = trips[blockIdx.x] >> (t & 7);
    #pragma unroll 1
    for (int j = 0; j < n; j++)
        x = x * 1103515245 + 12345;
    out[i] = x;
}
