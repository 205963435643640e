// C = A * B for row-major float32 matrices (A: M x K, B: K x N, C: M x N), tiled for simacc's scratchpad.
// Tiles that fit the scratchpad (the knowledge note for simacc): 32 x 32 of A, 32 x 64 of B.
#include <algorithm>

constexpr int BLOCK_M = 32;
constexpr int BLOCK_N = 64;
constexpr int BLOCK_K = 32;

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
            for (int j = j0; j < j1; ++j) C[i * N + j] += a * B[k * N + j];
          }
        }
      }
    }
  }
}
