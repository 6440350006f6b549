// Every shuffle mode with widths 4/8/16/32 and out-of-range lane/delta/mask operands, plus the
// predicate output of shfl.sync via inline PTX.
extern "C" __global__ void shfl_all(const int* x, const int* sel, int* out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[t], s = sel[t];
    int* o = out + t * 24;
    const unsigned F = 0xffffffffu;
    o[0] = __shfl_sync(F, v, s, 4);      o[1] = __shfl_sync(F, v, s, 8);
    o[2] = __shfl_sync(F, v, s, 16);     o[3] = __shfl_sync(F, v, s);
    o[4] = __shfl_up_sync(F, v, s, 4);   o[5] = __shfl_up_sync(F, v, s, 8);
    o[6] = __shfl_up_sync(F, v, s, 16);  o[7] = __shfl_up_sync(F, v, s);
    o[8] = __shfl_down_sync(F, v, s, 4); o[9] = __shfl_down_sync(F, v, s, 8);
    o[10] = __shfl_down_sync(F, v, s, 16); o[11] = __shfl_down_sync(F, v, s);
    o[12] = __shfl_xor_sync(F, v, s, 4); o[13] = __shfl_xor_sync(F, v, s, 8);
    o[14] = __shfl_xor_sync(F, v, s, 16); o[15] = __shfl_xor_sync(F, v, s);
    int r, p;
    asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, 0x1800, 0xffffffff; selp.s32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(s)); o[16] = r; o[17] = p;
    asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, 0x181f, 0xffffffff; selp.s32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(s)); o[18] = r; o[19] = p;
    asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, 0x101f, 0xffffffff; selp.s32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(s)); o[20] = r; o[21] = p;
    asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, 0x0c13, 0xffffffff; selp.s32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v), "r"(s)); o[22] = r; o[23] = p;
}
