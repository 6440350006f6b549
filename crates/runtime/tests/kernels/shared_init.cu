// Kernels for crates/runtime/tests/shared_init.rs. Regenerate the PTX with
//   warpfold inspect shared_init.cu --emit ptx > shared_init.ptx

// Each thread stores its word before the barrier, then reads another
// thread's: the driver need not clear shared memory between CTAs.
#define B 256
extern "C" __global__ void store_first(const float* in, float* out, int n)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = i < n ? in[i] : -1.0f;
    __syncthreads();
    if (i < n) out[i] = s[B - 1 - t] + s[(t + 7) & (B - 1)];
}

// Only even CTAs store; odd ones read what the clear left: zeros.
extern "C" __global__ void store_some(const float* in, float* out, int n)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    if ((blockIdx.x & 1) == 0) s[t] = i < n ? in[i] : -1.0f;
    __syncthreads();
    if (i < n) out[i] = s[B - 1 - t];
}

// Every thread stores, but one thread reads before the barrier.
extern "C" __global__ void read_early(const float* in, float* out, int n)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    float early = t == 0 ? s[B - 1] : 0.0f;
    s[t] = i < n ? in[i] : -1.0f;
    __syncthreads();
    if (i < n) out[i] = s[B - 1 - t] + early;
}
