// %laneid equals linear tid % 32; %warpid < %nwarpid; per-warp uniform %warpid (sanity only).
extern "C" __global__ void lanes(unsigned* out)
{
    unsigned lane, warp, nwarp;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
    asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(nwarp));
    unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned g = blockIdx.x * blockDim.x * blockDim.y + tid;
    unsigned w0 = __shfl_sync(0xffffffffu, warp, 0);
    out[g * 3] = lane;
    out[g * 3 + 1] = (warp < nwarp) ? 1u : 0u;
    out[g * 3 + 2] = (w0 == warp) ? 1u : 0u;
}
