// Kernels for crates/runtime/tests/unrolled_rounds.rs. Regenerate the PTX with
//   warpfold inspect unrolled_rounds.cu --emit ptx > unrolled_rounds.ptx

// Rounds short enough to be unrolled over the warps, whose registers the
// compiled backend carries from round to round in a scratch copy (see
// `ChainSlots` in crates/cpu/src/emit.rs) and writes back to the warp
// state only where the unrolled rounds stop. `keep` is live across every
// barrier but read only at the end; `a` and `b` across one each. The
// rounds stop where a CTA picks one of two barriers (`n`, the CTA's own)
// and where lanes 100-127 of some CTAs finish (their outputs stay zero),
// so that the rounds after start with partial warps.
#define B 128
extern "C" __global__ void chain_pass(const int* in, const int* trips, int* out)
{
    __shared__ int s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    int keep = in[i] * 3 + t;
    int n = trips[blockIdx.x];
    s[t] = in[i];
    __syncthreads();
    int a = s[(t + 1) & (B - 1)] ^ keep;
    __syncthreads();
    s[t] += a;
    if (n & 1) {
        __syncthreads();
        s[t] = s[t] * 5 + n;
    } else {
        __syncthreads();
        s[t] = s[t] * 3 - n;
    }
    __syncthreads();
    int b = s[(t + 5) & (B - 1)];
    __syncthreads();
    if ((n & 2) && t >= 100)
        return;
    s[t] -= b;
    __syncthreads();
    int c = s[(t + 9) & (B - 1)];
    __syncthreads();
    out[i] = s[t] + c + keep * 7;
}

// A round that can end its threads (`n` over 1000; none does) has no one
// barrier to go on to, so the unrolled rounds stop after it with every
// warp at the barrier: what it wrote (`a`) and what passes through it
// (`keep`, written by the first round into the scratch copy: it is stored
// to shared memory there) go back to the state there, and the next round reads them from it.
extern "C" __global__ void chain_stop(const int* in, const int* trips, int* out)
{
    __shared__ int s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    int keep = in[i] * 3 + t;
    int n = trips[blockIdx.x];
    s[t] = keep;
    __syncthreads();
    int a = s[(t + 1) & (B - 1)] ^ keep;
    if (n > 1000)
        return;
    __syncthreads();
    s[t] += a;
    __syncthreads();
    out[i] = s[(t + 3) & (B - 1)] + keep * 7;
}

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

// As spin_sum, but the warps of a CTA differ: threads 0-31, 64-95, ...
// loop a few times and finish in the first round; the others loop
// trips[ctaid] times and may yield, so the first round ends with only
// some of the warps unfinished.
extern "C" __global__ void warp_spin(const int* in, const int* trips, int* out)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int x = in[i], n = (t >> 5) & 1 ? trips[blockIdx.x] : t & 7;
    #pragma unroll 1
    for (int j = 0; j < n; j++)
        x = x * 1103515245 + 12345;
    out[i] = x;
}
