// Tiled SGEMM C = A(MxK) * B(KxN) with 16x16 shared tiles; integer-valued floats keep it exact.
#define TS 16
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float As[TS][TS], Bs[TS][TS];
    int r = blockIdx.y * TS + threadIdx.y, c = blockIdx.x * TS + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        As[threadIdx.y][threadIdx.x] = (r < M && k0 + threadIdx.x < K) ? A[r * K + k0 + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (c < N && k0 + threadIdx.y < K) ? B[(k0 + threadIdx.y) * N + c] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TS; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (r < M && c < N) C[r * N + c] = acc;
}
