// redux.sync (sm_80): __reduce_add/min/max (unsigned and signed), and/or/xor; full and partial masks.
extern "C" __global__ void redux(const int* x, unsigned* out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    int v = x[t]; unsigned u = (unsigned)v;
    unsigned* o = out + t * 9;
    const unsigned F = 0xffffffffu;
    o[0] = __reduce_add_sync(F, u);
    o[1] = __reduce_min_sync(F, u);
    o[2] = __reduce_max_sync(F, u);
    o[3] = (unsigned)__reduce_min_sync(F, v);
    o[4] = (unsigned)__reduce_max_sync(F, v);
    o[5] = __reduce_and_sync(F, u);
    o[6] = __reduce_or_sync(F, u);
    o[7] = __reduce_xor_sync(F, u);
    if (lane < 16) o[8] = __reduce_add_sync(0x0000ffffu, u);
    else o[8] = (unsigned)__reduce_max_sync(0xffff0000u, v);
}
