// Blocks whose size is not a multiple of 32: warp-level ops with masks naming only existing lanes.
extern "C" __global__ void partial(const int* x, unsigned* out)
{
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    int g = blockIdx.x * blockDim.x + t;
    int nlast = blockDim.x - (blockDim.x & ~31);
    int lanes = (warp == (int)(blockDim.x >> 5) && nlast) ? nlast : 32;
    unsigned mask = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
    int v = x[g];
    unsigned* o = out + g * 5;
    o[0] = __ballot_sync(mask, v & 1);
    o[1] = __activemask();
    o[2] = __shfl_sync(mask, v, (lane + 1) % lanes);
    o[3] = __shfl_xor_sync(mask, v, 1);
    int s = v;
    for (int k = 1; k < 32; k <<= 1) { int u = __shfl_up_sync(mask, s, k); if (lane >= k) s += u; }
    o[4] = s;   // inclusive warp scan over the existing lanes
}
