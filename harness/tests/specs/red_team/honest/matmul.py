# The honest float32 matrix product (products accumulated in float32, i-k-j order).
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void matmul(float* c, const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * b[p * n + j];
    }
  }
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, a, b):
        c = np.empty((a.shape[0], b.shape[1]), dtype=np.float32)
        cpp.matmul(c, a, b, a.shape[0], a.shape[1], b.shape[1])  # noqa: F821
        return c
