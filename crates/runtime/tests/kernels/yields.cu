// A loop with a lane-dependent edge test inside, unrolled by NVRTC into
// four copies: each trip passes the dispatcher for the edge lanes while
// the loop's index and pointers stay one value for the whole warp. Run
// by tests/yields.rs with small yield budgets, so that warps yield at
// every point of the loop.
// PTX: warpfold inspect yields.cu --emit ptx (NVRTC 12, compute_80).
extern "C" __global__ void edge_loop(float* out, const float* in, int n)
{
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    bool edge = x == 0 || x == 31;
    float acc = 0.0f;
    for (int z = 0; z < n; z++) {
        long i = (long)z * 64 + x;
        float c = in[i];
        if (!edge)
            c = c + in[i + 1] + in[i - 1];
        out[i] = c;
        acc += c;
    }
    out[x] += acc;
}
