// Kernels for crates/runtime/tests/tree_tails.rs. Regenerate the PTX with
//   warpfold inspect tree_tails.cu --emit ptx > tree_tails.ptx

// The last steps of a tree reduction, one barrier apart, where only some
// of the first lanes run: `s[t] += s[t + d]` for the lanes that `pick0`,
// `pick1` and `pick2` name (bits of lanes 0-3, 0-1 and 0), each step
// reading what the step before stored. Without AVX-512 the compiled
// backend reads just the elements of lanes 0-3 there (see
// `lower::load_contig`).
extern "C" __global__ void tree_tail(const int* in, int* out, int pick0, int pick1, int pick2)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) s[t] += s[t + 32];
    __syncthreads();
    if (t < 16) s[t] += s[t + 16];
    __syncthreads();
    if (t < 8) s[t] += s[t + 8];
    __syncthreads();
    if (t < 4 && ((pick0 >> t) & 1)) s[t] += s[t + 4];
    __syncthreads();
    if (t < 2 && ((pick1 >> t) & 1)) s[t] += s[t + 2];
    __syncthreads();
    if (t < 1 && (pick2 & 1)) s[t] += s[t + 1];
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[t];
}
