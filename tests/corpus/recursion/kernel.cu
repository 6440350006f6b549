// Genuine recursion through __noinline__ functions (call stack in .local).
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ unsigned gcd(unsigned a, unsigned b) { return b == 0 ? a : gcd(b, a % b); }
__device__ __noinline__ int ack(int m, int n)
{
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}
extern "C" __global__ void rec(const unsigned* a, const unsigned* b, int* out)
{
    int t = threadIdx.x;
    out[t * 3] = fib(t % 13);
    out[t * 3 + 1] = (int)gcd(a[t], b[t]);
    out[t * 3 + 2] = ack(t % 3, t % 4);
}
