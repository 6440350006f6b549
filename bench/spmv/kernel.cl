#define NNZ 16
#define STEP 37
__kernel void spmv(__global float* y, __global const float* val, __global const float* x, int n)
{
    int row = get_global_id(0);
    if (row >= n) return;
    __global const float* v = val + (size_t)row * NNZ;
    float acc = 0.0f;
    for (int k = 0; k < NNZ; k++) {
        int col = row + k * STEP;
        if (col >= n) col -= n;
        acc += v[k] * x[col];
    }
    y[row] = acc;
}
