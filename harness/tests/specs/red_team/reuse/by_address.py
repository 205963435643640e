# Result reuse by address: remembers the sums of the last input it was given, keyed by the input's address, and
# copies them back when given that address again (CUDA-L1's reported pointer cache; KernelBench's
# test_eval_adversarial result reuse).
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
#include <cstring>
static const float* last_x = nullptr;
static float saved[4096];
extern "C" void row_sum(float* out, const float* x, int64_t rows, int64_t cols) {
  if (x == last_x) { std::memcpy(out, saved, sizeof(float) * rows); return; }
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) s += x[i * cols + j];
    out[i] = (float)s;
  }
  last_x = x;
  std::memcpy(saved, out, sizeof(float) * rows);
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty((x.shape[0],), dtype=np.float32)
        cpp.row_sum(out, x, x.shape[0], x.shape[1])  # noqa: F821
        return out
