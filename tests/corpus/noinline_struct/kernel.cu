// __noinline__ device functions with several parameters returning structs by value (.param aggregates).
struct Res { int sum; long long prod; float avg; short tag; };
struct Pair { double a; int b; };
__device__ __noinline__ Res combine(int a, int b, int c, long long d, float w, short tag)
{
    Res r;
    r.sum = a + b + c;
    r.prod = (long long)a * b * d;
    r.avg = (a + b + c) * w;
    r.tag = tag ^ (short)c;
    return r;
}
__device__ __noinline__ Pair swapmix(Pair p, int k) { Pair q; q.a = p.b * 0.5 + k; q.b = (int)p.a - k; return q; }
extern "C" __global__ void structs(const int* x, int* oi, long long* ol, float* of, double* od)
{
    int t = threadIdx.x;
    Res r = combine(x[t], x[t + 1], t, (long long)x[t + 2] * 1000, 0.25f, (short)(t * 257));
    Pair p = {x[t] * 2.0, x[t + 1]};
    Pair q = swapmix(p, t);
    oi[t * 3] = r.sum; oi[t * 3 + 1] = r.tag; oi[t * 3 + 2] = q.b;
    ol[t] = r.prod; of[t] = r.avg; od[t] = q.a;
}
