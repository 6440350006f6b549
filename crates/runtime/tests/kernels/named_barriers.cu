// Kernels for crates/runtime/tests/named_barriers.rs. Regenerate the PTX
// with
//   warpfold inspect named_barriers.cu --emit ptx > named_barriers.ptx

// Warp 0 produces, warp 1 consumes, through one shared buffer guarded by
// two named barriers of 64 threads: each side arrives without waiting
// for the other's barrier. Warp 2 takes no part and leaves early.
extern "C" __global__ void produce_consume(const int* in, int* out, int rounds)
{
    __shared__ int buf[32];
    int t = threadIdx.x, lane = t & 31;
    int base = blockIdx.x * rounds * 32;
    if (t >= 64) return;
    for (int r = 0; r < rounds; r++) {
        if (t < 32) {
            if (r > 0) asm volatile("bar.sync 2, 64;" ::: "memory");
            buf[lane] = in[base + r * 32 + lane] * 3;
            asm volatile("bar.arrive 1, 64;" ::: "memory");
        } else {
            asm volatile("bar.sync 1, 64;" ::: "memory");
            out[base + r * 32 + lane] = buf[(lane + r) & 31] + r;
            asm volatile("bar.arrive 2, 64;" ::: "memory");
        }
    }
}

// A counted barrier only one warp reaches: no thread can go on.
extern "C" __global__ void lonely_barrier(int* out)
{
    if (threadIdx.x < 32) asm volatile("bar.sync 3, 64;" ::: "memory");
    out[threadIdx.x] = 1;
}

// A barrier id past the 16 a CTA has, next to a counted barrier: an error
// on both backends (the compiled one leaves such kernels to the interpreter).
extern "C" __global__ void barrier_id_out_of_range(int* out)
{
    if (threadIdx.x < 32) asm volatile("bar.arrive 1, 64;" ::: "memory");
    else asm volatile("bar.sync 1, 64;" ::: "memory");
    asm volatile("bar.sync 100;" ::: "memory");
    out[threadIdx.x] = 1;
}

// One hand-over, no loop: warp 0 arrives at barrier 1 after writing, warp 1
// waits there and reads. Small enough that full warps start in a function
// of their own (`@wf_fresh`), which must run on past the arrival.
extern "C" __global__ void arrive_once(const int* in, int* out)
{
    __shared__ int buf[32];
    int t = threadIdx.x, lane = t & 31;
    if (t < 32) {
        buf[lane] = in[blockIdx.x * 32 + lane] * 5;
        asm volatile("bar.arrive 1, 64;" ::: "memory");
        out[blockIdx.x * 64 + t] = -1;
    } else {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[blockIdx.x * 64 + t] = buf[31 - lane] + 1;
    }
}
