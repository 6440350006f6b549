// Kernels for crates/runtime/tests/whole_warps.rs. Regenerate the PTX with
//   warpfold inspect whole_warps.cu --emit ptx > whole_warps.ptx

// After a barrier, a branch on t < k: warps wholly on one side (which the
// compiled backend runs through its whole-warp copies of the blocks), a
// warp split by it, and with 80 threads a partial last warp. Registers
// written on one side are read after the join and through shared memory.
extern "C" __global__ void split_after_barrier(const float* in, float* out, int k)
{
    __shared__ float s[128];
    int t = threadIdx.x, n = blockDim.x;
    s[t] = in[blockIdx.x * n + t];
    __syncthreads();
    float v = -1.0f;
    int w = 7;
    if (t < k) {
        v = s[(t + 1) % n] * 2.0f;
        w = t * 3;
    }
    __syncthreads();
    s[t] = v + w;
    __syncthreads();
    out[blockIdx.x * n + t] = s[n - 1 - t] + v;
}

// A loop after a barrier whose branch each trip sends whole warps one way
// or the other (by warp and trip) or splits them (by lane), so the loop's
// way back leads to whole-warp copies and to the general blocks in turn.
extern "C" __global__ void loop_after_barrier(const float* in, float* out, int trips, int split)
{
    __shared__ float s[128];
    int t = threadIdx.x, n = blockDim.x;
    s[t] = in[blockIdx.x * n + t];
    __syncthreads();
    float acc = 0.0f;
    for (int j = 0; j < trips; j++) {
        int key = split ? t + j : (t >> 5) + j;
        if (key & 1)
            acc += s[(t + j) % n];
        else
            acc = acc * 0.5f - 1.0f;
    }
    __syncthreads();
    out[blockIdx.x * n + t] = acc;
}

// The same without barriers (the general warp function copies loop blocks
// without memory accesses): lanes past `limit` exit first, so some warps
// are never whole, and lanes leave the loop early where `stop` says.
extern "C" __global__ void loop_in_general_function(const float* in, float* out, int trips, int split, int limit, int stop)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t >= limit) return;
    float x = in[i], acc = 0.0f;
    for (int j = 0; j < trips; j++) {
        int key = split ? t + j : (t >> 5) + j;
        if (key & 1)
            acc = acc + x * 0.5f;
        else
            acc = acc * 0.25f - x;
        if (t == stop && j == 2)
            break;
    }
    out[i] = acc;
}

// A barrier-free loop whose trips load and store (the general warp function
// copies all its blocks, convergent ones too, so that a full warp's trips
// run without masks): lanes past `limit` exit first, so some warps are
// never whole, and lane `edge` of each warp takes the other side of the
// branch (a stencil's border).
extern "C" __global__ void march_in_general_function(const float* in, float* out, int trips, int limit, int edge)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t >= limit) return;
    float acc = 0.0f;
    for (int z = 0; z < trips; z++) {
        float v = in[i + z];
        if ((t & 31) == edge)
            acc = acc - v;
        else
            acc = acc * 0.5f + in[i + z + 1] * v;
        out[i] = acc;
    }
}
