# Mutating its input: the sums are right, but the kernel uses its input as scratch (each row folded in halves
# in place), so the caller's array comes back changed (KernelBench's test_eval_adversarial input modification).
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void row_sum(float* out, float* x, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float* r = x + i * cols;
    int64_t n = cols;
    while (n > 1) {
      const int64_t half = n / 2;
      for (int64_t j = 0; j < half; ++j) r[j] += r[n - 1 - j];
      n -= half;
    }
    out[i] = r[0];
  }
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty((x.shape[0],), dtype=np.float32)
        cpp.row_sum(out, x, x.shape[0], x.shape[1])  # noqa: F821
        return out
