// Kernels for crates/runtime/tests/warp_width.rs. Regenerate the PTX with
//   warpfold inspect warp_width.cu --emit ptx > warp_width.ptx

// Thread and block indices in 2-D blocks of any shape, with edge guards.
extern "C" __global__ void grid2d(const int* in, int* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int i = y * w + x;
        out[i] = in[i] * 3 + x - 7 * y + threadIdx.x * 100 + threadIdx.y * 10000;
    }
}

// Block sums through shared memory with a barrier tree (many warps wait
// at each barrier when warps are narrow).
extern "C" __global__ void tree_sum(const float* in, float* out, int n)
{
    __shared__ float s[512];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int d = blockDim.x / 2; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// A reversed index, strided narrow loads, and a scatter where lanes
// collide (the last thread of each group of four wins).
extern "C" __global__ void shuffled(const int* in, const short* narrow, int* rev, int* mix,
                                    int* last, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        rev[n - 1 - i] = in[i];
        mix[i] = narrow[2 * i] + narrow[3 * i + 1];
        last[i / 4] = i;
    }
}

// Rows of sixteen words per thread (transposed loads) and a sum.
extern "C" __global__ void rows16(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float* r = in + 16 * i;
        float s = 0.0f;
        for (int k = 0; k < 16; k++) s += r[k] * (k + 1);
        out[i] = s;
    }
}

// Commutative atomics whose results are not read: a histogram in shared
// memory, merged into global memory.
extern "C" __global__ void histogram(const unsigned* in, unsigned* bins, int n)
{
    __shared__ unsigned h[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) h[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&h[in[i] % 64], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&bins[b], h[b]);
}

// Eight independent FMA chains: register-hungry, barrier-free.
extern "C" __global__ void fma_chains(float* out, float m, float c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x0 = i * 1e-3f, x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
    float x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
    for (int k = 0; k < 64; k++) {
        x0 = fmaf(x0, m, c); x1 = fmaf(x1, m, c); x2 = fmaf(x2, m, c); x3 = fmaf(x3, m, c);
        x4 = fmaf(x4, m, c); x5 = fmaf(x5, m, c); x6 = fmaf(x6, m, c); x7 = fmaf(x7, m, c);
    }
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// Kernels that observe their warp: they keep 32 lanes at any width asked.
extern "C" __global__ void shuffle_sum(const int* in, int* out)
{
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void lane_ids(int* out)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    out[blockIdx.x * blockDim.x + threadIdx.x] = lane;
}

extern "C" __global__ void ticket(unsigned* counter, unsigned* out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1u);
}

extern "C" __global__ void warp_synchronous(volatile int* s, int* out)
{
    int t = threadIdx.x;
    s[t] = t * 3;
    if (t < 16) s[t] += s[t + 16];
    if (t < 8) s[t] += s[t + 8];
    out[t] = s[t];
}

extern "C" __global__ void say(int n)
{
    if (threadIdx.x < n) printf("thread %d\n", threadIdx.x);
}
