// Scalar CSR SpMV (one thread per row) for a banded matrix with NNZ
// nonzeros per row at columns (row + 37 k) mod n. The row pointers and
// column indices are implicit; the values and the x gathers are real loads.
#define NNZ 16
#define STEP 37
extern "C" __global__ void spmv(float* y, const float* val, const float* x, int n)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const float* v = val + (size_t)row * NNZ;
    float acc = 0.0f;
    for (int k = 0; k < NNZ; k++) {
        int col = row + k * STEP;
        if (col >= n) col -= n; // (row + 37 k) mod n, as 37 k < n
        acc += v[k] * x[col];
    }
    y[row] = acc;
}
