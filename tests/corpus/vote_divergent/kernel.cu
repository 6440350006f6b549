// __ballot_sync/__any_sync/__all_sync/__activemask in a full warp and in divergent branches.
extern "C" __global__ void votes(const int* x, unsigned* out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    int v = x[t];
    unsigned* o = out + t * 5;
    o[0] = __ballot_sync(0xffffffffu, v > 0);
    if (lane % 3 == 0) {
        const unsigned M = 0x49249249u;
        o[1] = __ballot_sync(M, v > 0);
        o[2] = __any_sync(M, v > 500);
        o[3] = __all_sync(M, v > -900);
        o[4] = __activemask();
    } else {
        const unsigned M = ~0x49249249u;
        o[1] = __ballot_sync(M, v > 0);
        o[2] = __any_sync(M, v > 500);
        o[3] = __all_sync(M, v > -900);
        o[4] = __activemask();
    }
}
