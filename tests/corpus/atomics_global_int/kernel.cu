// Integer atomics on global memory under heavy contention (all threads of 4 blocks hit the same words).
// Only order-independent results are checked; return values are checked through permutation flags.
extern "C" __global__ void atomics(const int* x, int* acc, unsigned* uacc, long long* lacc,
                                   unsigned long long* ulacc, int* seen, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[t];
    int old = atomicAdd(&acc[0], 1);             // old values are a permutation of 0..n-1
    if (old >= 0 && old < n) atomicAdd(&seen[old], 1);
    atomicSub(&acc[1], v);
    atomicMin(&acc[2], v);
    atomicMax(&acc[3], v);
    atomicAnd(&acc[4], ~(1 << (t & 31)) | v);
    atomicOr(&acc[5], v & 0x0f0f0f0f);
    atomicXor(&acc[6], v);
    atomicExch(&acc[7 + t % 4], 42);             // everyone writes the same value
    atomicMin(&uacc[0], (unsigned)v);            // unsigned compare
    atomicMax(&uacc[1], (unsigned)v);
    atomicInc(&uacc[2], 100u);                   // wraps to 0 after 100
    atomicDec(&uacc[3], 50u);                    // 0 -> 50
    atomicAdd((unsigned long long*)&lacc[0], (unsigned long long)((long long)v * 100000LL));
    atomicMin(&lacc[1], (long long)v * -3000000000LL);
    atomicMax(&lacc[2], (long long)v * -3000000000LL);
    atomicAdd(&ulacc[0], 0xffffffffull);
    atomicOr(&ulacc[1], 1ull << (t & 63));
    atomicXor(&ulacc[2], (unsigned long long)(long long)v << 20);
    unsigned old2, cur = uacc[4];                // CAS increment loop
    do { old2 = cur; cur = atomicCAS(&uacc[4], old2, old2 + 3u); } while (cur != old2);
    unsigned long long o64, c64 = ulacc[3];
    do { o64 = c64; c64 = atomicCAS(&ulacc[3], o64, o64 + 0x100000001ull); } while (c64 != o64);
}
