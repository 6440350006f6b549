// __match_any_sync (lanes with equal key) and __match_all_sync (with predicate), 32- and 64-bit keys.
extern "C" __global__ void match(const int* keys, const long long* lkeys, unsigned* out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int pred;
    out[t * 4 + 0] = __match_any_sync(0xffffffffu, keys[t]);
    out[t * 4 + 1] = __match_any_sync(0xffffffffu, lkeys[t]);
    out[t * 4 + 2] = __match_all_sync(0xffffffffu, keys[t] / 1000, &pred);
    out[t * 4 + 3] = pred;
}
