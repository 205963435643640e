// WRONG on purpose: the inner loop stops at the last multiple of 16, so odd widths leave columns unwritten.
// C = A * B for row-major float32 matrices (A: M x K, B: K x N, C: M x N), blocked for the cache.
// The block sizes below are the tunables; these values are deliberately poor.
#include <algorithm>

constexpr int BLOCK_M = 64;
constexpr int BLOCK_N = 16;
constexpr int BLOCK_K = 16;

extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int j0 = 0; j0 < N; j0 += BLOCK_N) {
    const int j1 = std::min(j0 + BLOCK_N, N);
    for (int k0 = 0; k0 < K; k0 += BLOCK_K) {
      const int k1 = std::min(k0 + BLOCK_K, K);
      for (int i0 = 0; i0 < M; i0 += BLOCK_M) {
        const int i1 = std::min(i0 + BLOCK_M, M);
        for (int i = i0; i < i1; ++i) {
          for (int k = k0; k < k1; ++k) {
            const float a = A[i * K + k];
            for (int j = j0; j < (j1 & ~15); ++j) C[i * N + j] += a * B[k * N + j];
          }
        }
      }
    }
  }
}
