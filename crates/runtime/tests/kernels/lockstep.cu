// Kernels for the CPU backend's warps-in-step loops (crates/cpu/src/lockstep.rs).
// Each thread owns an (x, y) column of an nx x ny x nz grid and walks it
// along z, reading its neighbours in x, y and z.

// A 7-point average: interior points get the mean of themselves and their
// six neighbours weighted by w, the boundary keeps its value: the march of
// column (x, y).
__device__ __forceinline__ void march_column(float* out, const float* in, int nx, int ny, int nz, float w, int x, int y)
{
    int plane = nx * ny;
    bool side = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    for (int z = 0; z < nz; z++) {
        int i = z * plane + y * nx + x;
        float v = in[i];
        if (!side && z > 0 && z < nz - 1)
            v = (1.0f - 6.0f * w) * v + w * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]
                                              + in[i - plane] + in[i + plane]);
        out[i] = v;
    }
}

// The march; threads past the grid in x or y end at once. It takes turns.
extern "C" __global__ void march(float* out, const float* in, int nx, int ny, int nz, float w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    march_column(out, in, nx, ny, nz, w, x, y);
}

// The same walk for a number of planes that differs between threads: no turns.
extern "C" __global__ void march_own_depth(float* out, const float* in, int nx, int ny, int nz, float w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int plane = nx * ny;
    int depth = nz - (x & 1);
    for (int z = 1; z < depth - 1; z++) {
        int i = z * plane + y * nx + x;
        out[i] = in[i] + w * (in[i - plane] + in[i + plane] + in[i - nx] + in[i + nx]);
    }
}

// The same walk that also counts its interior points with an atomic: no turns.
extern "C" __global__ void march_counting(float* out, const float* in, int nx, int ny, int nz, float w, int* count)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int plane = nx * ny;
    for (int z = 1; z < nz - 1; z++) {
        int i = z * plane + y * nx + x;
        out[i] = in[i] + w * (in[i - plane] + in[i + plane] + in[i - nx] + in[i + nx]);
    }
    atomicAdd(count, nz - 2);
}

// A walk with one load a trip: no turns (too little to share).
extern "C" __global__ void march_light(float* out, const float* in, int nx, int ny, int nz, float w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int plane = nx * ny;
    float s = 0.0f;
#pragma unroll 1
    for (int z = 0; z < nz; z++) {
        s = s * w + in[z * plane + y * nx + x];
    }
    out[y * nx + x] = s;
}

// The march for odd columns only, inside a branch the even ones skip; both
// then write their row sum. No turns: the even lanes would have to wait
// behind their warp's odd ones at the barrier.
extern "C" __global__ void march_odd_columns(float* out, const float* in, int nx, int ny, int nz, float w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int plane = nx * ny;
    float s = 0.0f;
    if (x & 1) {
        for (int z = 1; z < nz - 1; z++) {
            int i = z * plane + y * nx + x;
            float v = in[i] + w * (in[i - plane] + in[i + plane] + in[i - nx] + in[i + nx]);
            out[i] = v;
            s += v;
        }
    } else {
        s = in[y * nx + x] * 2.0f;
    }
    out[y * nx + x] = s;
}

// The march, which also writes each thread's ids (%ctaid.x, %tid.x,
// %ntid.x, %nctaid.x, %tid.y) to row y, column x of `ids` (rows of 256
// columns, grids up to 256 threads wide), before threads past the grid's
// edge end: blocks along x that the compiled backend runs side by side as
// one wide CTA must still see their own, and a wide CTA short of real ones
// must not run the missing ones (crates/cpu/src/merge.rs).
extern "C" __global__ void march_ids(float* out, const float* in, int nx, int ny, int nz, float w, int* ids)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int* id = ids + 5 * (y * 256 + x);
    id[0] = blockIdx.x;
    id[1] = threadIdx.x;
    id[2] = blockDim.x;
    id[3] = gridDim.x;
    id[4] = threadIdx.y;
    if (x >= nx || y >= ny) return;
    march_column(out, in, nx, ny, nz, w, x, y);
}
