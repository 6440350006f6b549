// Integer division/remainder: truncation toward zero, remainder has the dividend's sign.
// By variables and by constants (the compiler turns those into mul.hi/shift sequences).
extern "C" __global__ void divrem(int n, const int* a, const int* b, const long long* la,
                                  const long long* lb, int* o32, long long* o64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    unsigned ux = x, uy = y;
    int* o = o32 + i * 14;
    o[0] = x / y;   o[1] = x % y;
    o[2] = x / 7;   o[3] = x % 7;
    o[4] = x / -3;  o[5] = x % -3;
    o[6] = x / 16;  o[7] = x % 16;
    o[8] = (int)(ux / uy); o[9] = (int)(ux % uy);
    o[10] = (int)(ux / 10u); o[11] = (int)(ux % 10u);
    o[12] = (int)(ux / 0x80000001u); o[13] = x / -2147483647;
    long long X = la[i], Y = lb[i];
    unsigned long long uX = X, uY = Y;
    long long* q = o64 + i * 6;
    q[0] = X / Y; q[1] = X % Y;
    q[2] = X / -1000000007LL; q[3] = X % -1000000007LL;
    q[4] = (long long)(uX / uY); q[5] = (long long)(uX % uY);
}
