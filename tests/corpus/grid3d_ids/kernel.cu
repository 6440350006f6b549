// Every thread of a 3-D grid of 3-D blocks records its special registers.
extern "C" __global__ void ids(unsigned* out)
{
    unsigned bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
    unsigned* o = out + g * 12;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
    o[6] = blockDim.x; o[7] = blockDim.y; o[8] = blockDim.z;
    o[9] = gridDim.x; o[10] = gridDim.y; o[11] = gridDim.z;
}
