// Kernels for crates/runtime/tests/packing.rs: blocks narrower than a
// warp, which the compiled backend packs several to a warp when it can.
// Regenerate the PTX with
//   warpfold inspect packing.cu --emit ptx > packing.ptx

__device__ unsigned lane_id()
{
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

// Every thread records who it is, and a saxpy on the global index (a
// real CTA's blockIdx.x * blockDim.x + threadIdx.x, unit stride across a
// packed warp) by the threads of the first row and plane, the only ones
// whose index is their own (others would race on y, and the result would
// depend on which CTA ran first). A per-thread array indexed at run time
// lives in local memory: each packed thread needs its own frame.
extern "C" __global__ void who_am_i(unsigned* out, float* y, const float* x, int n)
{
    int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    int nt = blockDim.x * blockDim.y * blockDim.z;
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int g = b * nt + t;
    if (g >= n) return;
    unsigned* o = out + 8 * g;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = lane_id();
    o[6] = blockDim.x * 100 + blockDim.y * 10 + blockDim.z;
    int seen[8];
    for (int i = 0; i < 8; i++) seen[i] = i * t;
    o[7] = seen[(t + b) & 7] + gridDim.x;
    if (blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        y[i] = 2.0f * x[i] + y[i];
    }
}

// Shuffles inside a block of 8 or 16 threads: a whole-warp broadcast of
// lane 3, a butterfly sum by offsets below 8, and a sum down segments of 8.
extern "C" __global__ void block_shuffles(const float* x, float* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[g];
    float b = __shfl_sync(0xffffffffu, v, 3);
    float s = v;
    for (int o = 4; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float d = v;
    for (int o = 4; o > 0; o >>= 1) d += __shfl_down_sync(0xffffffffu, d, o, 8);
    __syncwarp();
    out[3 * g] = b;
    out[3 * g + 1] = s;
    out[3 * g + 2] = d;
}

// A ballot spans the warp: the backend must not pack this kernel.
extern "C" __global__ void block_ballot(const int* x, unsigned* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = __ballot_sync(0xffffu >> (16 - blockDim.x), x[g] > 0);
}

// Shuffles on paths that depend on the block: packed CTAs would take
// different paths in one warp and wait for each other.
extern "C" __global__ void block_dependent_shuffle(const int* x, int* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[g];
    if (blockIdx.x % 3 == 0) v += __shfl_sync(0xffffffffu, v, 1);
    else v -= __shfl_xor_sync(0xffffffffu, v, 1);
    out[g] = v;
}

// Host calls from packed blocks: printf, assert and trap name the real
// block and thread.
extern "C" __global__ void checked_double(const int* a, int* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (a[g] % 5 == 0) printf("%d:%d=%d\n", blockIdx.x, threadIdx.x, a[g]);
    assert(a[g] >= 0);
    if (a[g] == 1000) asm("trap;");
    out[g] = 2 * a[g];
}

// Shared memory and barriers in blocks of 4, 8 or 16 threads: each block
// reads its slice back through shared memory after a barrier and counts
// its threads with a shared atomic. Packed, every block needs its own
// shared memory.
extern "C" __global__ void block_reverse(const float* x, float* out)
{
    __shared__ float s[16];
    __shared__ int count;
    int t = threadIdx.x, n = blockDim.x;
    int g = blockIdx.x * n + t;
    if (t == 0) count = 0;
    s[t] = x[g];
    __syncthreads();
    float v = s[n - 1 - t] + s[(t + 1) % n];
    atomicAdd(&count, 1);
    __syncthreads();
    out[g] = v * count;
}

// Barriers on paths that depend on the block: packed blocks would wait at
// different barriers, so this kernel keeps one block per warp.
extern "C" __global__ void block_dependent_barrier(int* out)
{
    __shared__ int s[16];
    int t = threadIdx.x, n = blockDim.x;
    s[t] = t * 10 + blockIdx.x;
    if (blockIdx.x % 2) {
        __syncthreads();
        out[blockIdx.x * n + t] = s[(t + 1) % n];
    } else {
        __syncthreads();
        out[blockIdx.x * n + t] = s[(t + 2) % n];
    }
}

// A butterfly by 8 in segments of 8: lanes 0-7 of a warp keep their value,
// lanes 8-15 read lanes 0-7. In blocks of 8 the offset would cross into the next
// packed block, so those stay one per warp; blocks of 16 pack.
extern "C" __global__ void xor_past_segment(const float* x, float* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = __shfl_xor_sync(0xffffffffu, x[g], 8, 8);
}
