// Warp collectives inside divergent branches with disjoint masks, followed by
// a full-warp collective after the branches join (valid with independent
// thread scheduling: each branch's group completes on its own).
extern "C" __global__ void branch_collectives(unsigned* out, const int* in)
{
    int lane = threadIdx.x & 31;
    unsigned r;
    if (lane % 3 == 0) r = __ballot_sync(0x49249249u, in[threadIdx.x] & 1);
    else r = __reduce_add_sync(~0x49249249u, 1u);
    out[threadIdx.x] = r;
    out[32 + threadIdx.x] = __reduce_max_sync(0xffffffffu, (unsigned)in[threadIdx.x]);
}

extern "C" __global__ void branch_shuffles(unsigned* out, const int* in)
{
    int lane = threadIdx.x & 31;
    unsigned r;
    if (lane < 16) r = __shfl_sync(0x0000ffffu, in[threadIdx.x], 3);
    else r = __shfl_xor_sync(0xffff0000u, in[threadIdx.x], 1);
    out[threadIdx.x] = r;
    out[32 + threadIdx.x] = __shfl_sync(0xffffffffu, in[threadIdx.x], 0);
}
