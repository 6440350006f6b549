// Kernel taking a struct by value (.param .align 8 .b8 p[40]) with internal padding.
struct Params {
    char flag;        // offset 0
    int scale;        // offset 4
    double bias;      // offset 8
    short shift;      // offset 16
    float mul[3];     // offset 20
    long long add;    // offset 32 -> size 40, align 8
};
extern "C" __global__ void use_params(Params p, const int* x, double* out, long long* out2)
{
    int t = threadIdx.x;
    double v = (double)(x[t] * p.scale) + p.bias + p.mul[t % 3];
    out[t] = p.flag ? v : -v;
    out2[t] = ((long long)x[t] << p.shift) + p.add;
}
