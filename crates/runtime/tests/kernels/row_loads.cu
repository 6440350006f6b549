// Kernels for crates/runtime/tests/row_loads.rs. Regenerate the PTX with
//   warpfold inspect row_loads.cu --emit ptx > row_loads.ptx

// Each block row reads its own row of a matrix whose pitch is a
// parameter, as a tile load of a 16 x 16 SGEMM does: a warp of 32 lanes
// holds two (or four) block rows whose addresses are far apart, so the
// warp's addresses have no fixed pattern, while each row's are
// consecutive. Columns past `cols` leave partial rows.
extern "C" __global__ void tile_rows(const float* a, float* out, int pitch, int rows, int cols)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = a[r * pitch + c] * 2.0f + 1.0f;
}

// The same read where the first lanes of each row take no part and the
// row's addresses are worked out only by the lanes that do (inside the
// branch): the lanes off hold no address.
extern "C" __global__ void skip_first(const float* a, int pitch, float* out)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    if (tx >= 4) out[ty * blockDim.x + tx] = a[ty * pitch + tx];
}

// Rows reading along their row through a pointer stepped round a loop
// (a tile loop's operand): out[r][c] folds a[r * pitch + c + 16 i] over i.
extern "C" __global__ void row_steps(const float* a, float* out, int pitch, int steps)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = threadIdx.x;
    const float* p = a + r * pitch + c;
    float s = 0.0f;
    for (int i = 0; i < steps; i++) {
        s = s * 0.5f + *p;
        p += 16;
    }
    out[r * blockDim.x + c] = s;
}

// Rows writing at a pitch narrower than the row, so that the rows of a
// warp overlap: where two of its threads write one element, the later
// lane's value lands (the rows store in order).
extern "C" __global__ void overlapping_rows(float* out, int pitch)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    out[ty * pitch + tx] = tx + 100.0f * ty;
}

// Each block row reads one element of its own (the same address for all
// its lanes), with a different number of its lanes running per row: none
// in every third row, so a warp's rows mix none, some and all.
extern "C" __global__ void row_values(const float* v, float* out)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    if (tx < (ty % 3) * 6) out[ty * blockDim.x + tx] = v[ty * 7] + tx;
}

// The same in shared memory, where rows read whole vectors (the memory's
// slack makes that safe): each block row reads its row of a tile and the
// row's first element, with none, some or all of its lanes running.
extern "C" __global__ void shared_rows(const float* a, float* out)
{
    __shared__ float t[16][17];
    int tx = threadIdx.x, ty = threadIdx.y;
    t[ty][tx] = a[ty * blockDim.x + tx];
    __syncthreads();
    if (tx < (ty % 3) * 6) out[ty * blockDim.x + tx] = t[ty][tx] * 3.0f + t[ty][0];
}

// A tiled loop in the style of SGEMM's: each trip stages a tile column of
// `a` in shared memory through an index stepped round the loop (the block
// row times a pitch known at run time, plus the column), then every thread
// sums its row of the tile. `odd` is written again by the odd block rows
// alone, so it is no longer one value plus the column in each row of a
// warp (the values are small integers: every sum is exact).
extern "C" __global__ void tile_loop(const float* a, float* out, int pitch, int steps)
{
    __shared__ float t[16][17];
    int tx = threadIdx.x, ty = threadIdx.y, w = blockDim.x;
    int r = blockIdx.y * blockDim.y + ty;
    int idx = r * pitch + tx;
    int odd = tx;
    if (ty & 1) odd = r * pitch + (w - 1 - tx);
    float s = 0.0f;
    for (int i = 0; i < steps; i++) {
        t[ty][tx] = a[idx] + 0.5f * a[odd + i];
        __syncthreads();
        for (int j = 0; j < w; j++) s += t[ty][j] * (j + 1);
        __syncthreads();
        idx += w;
    }
    out[r * w + tx] = s;
}
