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
