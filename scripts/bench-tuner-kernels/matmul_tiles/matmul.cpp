// A tiled float32 matmul (C = A * B, row-major) whose tile sizes are poor: a benchmark kernel for the tuner,
// kept out of examples/ so the tuner is measured on code it was not written against.
#include <algorithm>

#define TILE_I 2
constexpr int TILE_J = 4;
constexpr int TILE_K = 512;

extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  std::fill(C, C + M * N, 0.0f);
  for (int i0 = 0; i0 < M; i0 += TILE_I) {
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
      for (int j0 = 0; j0 < N; j0 += TILE_J) {
        const int i1 = std::min(i0 + TILE_I, M), k1 = std::min(k0 + TILE_K, K), j1 = std::min(j0 + TILE_J, N);
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
