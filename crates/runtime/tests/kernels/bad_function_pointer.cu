// Kernel for crates/runtime/tests/semantics.rs. Regenerate the PTX with
//   warpfold inspect bad_function_pointer.cu --emit ptx > bad_function_pointer.ptx

// A call through a function pointer that is no function's address.
typedef int (*intop)(int);
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ intop g_ops[1] = { twice };
extern "C" __global__ void bad_function_pointer(int* out, unsigned long long bad)
{
    intop f = threadIdx.x == 5 ? (intop)bad : g_ops[0];
    out[threadIdx.x] = f(threadIdx.x);
}
