// Vector loads/stores: float4, int2, uchar4, short2, char4 (ld/st.v4/.v2), and __ldg (ld.global.nc).
extern "C" __global__ void vec(const float4* f4, const int2* i2, const uchar4* u4, const short2* s2,
                               const char4* c4, float4* of4, int* oi)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float4 a = f4[t];
    float4 b = __ldg(&f4[(t + 1) & 127]);
    of4[t] = make_float4(a.w + b.x, a.z - b.y, a.y * 2.0f, a.x);
    int2 p = i2[t]; uchar4 u = u4[t]; short2 s = s2[t]; char4 c = c4[t];
    int q = __ldg(&i2[127 - t].y);
    oi[t * 4 + 0] = p.x - p.y + q;
    oi[t * 4 + 1] = u.x + (u.y << 8) + u.z * u.w;
    oi[t * 4 + 2] = s.x * s.y;
    oi[t * 4 + 3] = c.x + c.y + c.z + c.w;
}
