// Kernels for crates/runtime/tests/load_groups.rs. Regenerate the PTX with
//   warpfold inspect load_groups.cu --emit ptx > load_groups.ptx

// Each thread reads the 16 words of its own row (a load group: the
// compiled backend reads a warp's rows as vectors and transposes them)
// and writes a weighted sum. Threads at or past n take no part, so the
// last warp of a grid has lanes off.
extern "C" __global__ void row_sums(const int* a, int* out, int n)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        const int* row = a + (long)g * 16;
        int s = 0;
#pragma unroll
        for (int j = 0; j < 16; j++) s += row[j] * (j + 1);
        out[g] = s;
    }
}
