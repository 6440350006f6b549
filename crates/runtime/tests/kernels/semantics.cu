// Kernels for crates/runtime/tests/semantics.rs. Regenerate the PTX with
//   warpfold inspect semantics.cu --emit ptx > semantics.ptx

// Device printf and assert.
extern "C" __global__ void print_and_assert(const int* a, int n)
{
    int t = threadIdx.x;
    if (t < n) printf("t=%d a=%d half=%.1f\n", t, a[t], a[t] * 0.5);
    assert(a[t] >= 0);
}

// Never ends: for the watchdog.
extern "C" __global__ void spin_forever(volatile int* flag)
{
    while (flag[0] == 0) { }
}

// Every lane of a warp takes the same lock in turn: needs independent
// thread scheduling (the lock holder must run while the others spin).
extern "C" __global__ void warp_lock(int* lock, int* counter)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            int v = *(volatile int*)counter;
            *(volatile int*)counter = v + 1;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}

// Warp 0 waits on a flag that warp 1 sets through shared memory.
extern "C" __global__ void cross_warp_flag(int* out)
{
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    if (threadIdx.x < 32) {
        while (flag == 0) { }
        out[threadIdx.x] = flag;
    } else if (threadIdx.x == 32) {
        flag = 7;
    }
}

// The classic pre-Volta reduction: the last warp without __syncwarp,
// relying on lock-step execution of volatile shared-memory code.
extern "C" __global__ void legacy_warp_reduce(const int* in, int* out)
{
    __shared__ volatile int s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) {
        s[t] += s[t + 32];
        s[t] += s[t + 16];
        s[t] += s[t + 8];
        s[t] += s[t + 4];
        s[t] += s[t + 2];
        s[t] += s[t + 1];
    }
    if (t == 0) out[0] = s[0];
}

// __syncthreads at two different places: undefined in CUDA, reported.
extern "C" __global__ void split_barrier(int* out)
{
    if (threadIdx.x < 32) {
        __syncthreads();
        out[threadIdx.x] = 1;
    } else {
        __syncthreads();
        out[threadIdx.x] = 2;
    }
}

// A shuffle whose mask leaves out the calling lane.
extern "C" __global__ void bad_mask(int* out)
{
    out[threadIdx.x] = __shfl_sync(0x1, threadIdx.x, 0);
}

// Reads past the end of its input in the last block only.
extern "C" __global__ void oob_in_last_block(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
    (void)n;
}

// The lock pattern that deadlocks without independent thread scheduling:
// losers spin before the critical section the winner is in.
extern "C" __global__ void warp_spin_lock(int* lock, int* counter)
{
    while (atomicCAS(lock, 0, 1) != 0) { }
    int v = *(volatile int*)counter;
    *(volatile int*)counter = v + 1;
    __threadfence();
    atomicExch(lock, 0);
}
