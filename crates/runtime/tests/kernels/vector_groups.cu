// Stores of 2 or 4 elements a thread to consecutive groups (arrays of
// float4, int2, double2, short4): the compiled backend interleaves the
// lanes' values and stores the warp's groups at once. Threads at or past
// `n`, and those with t % 7 == skip, store nothing.
extern "C" __global__ void groups(float4* f4, int2* i2, double2* d2, short4* s4, const float* in, int n, int skip)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n || t % 7 == skip) return;
    float x = in[t];
    f4[t] = make_float4(x, x + 1.0f, x * 2.0f, -x);
    i2[t] = make_int2(t, (int)x);
    d2[t] = make_double2(x, (double)t * 0.5);
    s4[t] = make_short4(t, -t, t * 3, 7);
}

// The same into shared memory (threads with t % 5 == skip leave their
// zeros), then read back by another thread, which writes one sum that
// weighs each element differently.
extern "C" __global__ void shared_groups(float* out, const float* in, int skip)
{
    __shared__ float4 s[256];
    int t = threadIdx.x, n = blockDim.x, i = blockIdx.x * n + t;
    s[t] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    float x = in[i];
    if (t % 5 != skip)
        s[t] = make_float4(x, -x, x * x, 1.0f);
    __syncthreads();
    float4 v = s[n - 1 - t];
    out[i] = v.x + 2.0f * v.y + 3.0f * v.z + 4.0f * v.w;
}

// Loads of groups: each thread reads its float4, int2, double2 and short4
// (threads at or past `n`, and those with t % 7 == skip, read nothing) and
// writes one sum that weighs each element differently.
extern "C" __global__ void load_groups(float* out, const float4* f4, const int2* i2, const double2* d2, const short4* s4, int n, int skip)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float r = -1.0f;
    if (t < n && t % 7 != skip) {
        float4 a = f4[t];
        int2 b = i2[t];
        double2 c = d2[t];
        short4 e = s4[t];
        r = a.x + 2.0f * a.y + 3.0f * a.z + 4.0f * a.w + (float)(b.x - 3 * b.y)
            + (float)(c.x - 0.5 * c.y) + (float)(e.x + 2 * e.y + 3 * e.z + 4 * e.w);
    }
    out[t] = r;
}
