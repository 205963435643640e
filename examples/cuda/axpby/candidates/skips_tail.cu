// WRONG on purpose: rounds n down to a multiple of 1024, so the tail of odd sizes is never written.
#include <cuda_runtime.h>

#define BLOCK 256

__global__ void axpby_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                             float a, float b, int n) {
  const long i = static_cast<long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i < n) out[i] = a * x[i] + b * y[i];
}

extern "C" void axpby(const float* x, const float* y, float* out, float a, float b, int n) {
  const int m = n & ~1023;
  axpby_kernel<<<(m + BLOCK - 1) / BLOCK, BLOCK>>>(x, y, out, a, b, m);
}
