#define TILE 32
#define ROWS 8
__kernel void transpose(__global float* out, __global const float* in, int w, int h)
{
    __local float tile[TILE][TILE + 1];
    int tx = get_local_id(0), ty = get_local_id(1);
    int bx = get_group_id(0), by = get_group_id(1);
    int x = bx * TILE + tx, y = by * TILE + ty;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < h) tile[ty + j][tx] = in[(y + j) * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    x = by * TILE + tx;
    y = bx * TILE + ty;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[tx][ty + j];
}
