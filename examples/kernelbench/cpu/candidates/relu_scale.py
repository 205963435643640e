import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void relu_scale(float* out, const float* x, const float* w, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float v = x[i * cols + j];
      out[i * cols + j] = (v > 0.0f ? v : 0.0f) * w[j];
    }
}
"""


class ModelNew:
    def __init__(self, dim):
        self.weight = np.zeros(dim, dtype=np.float32)

    def forward(self, x):
        out = np.empty_like(x)
        cpp.relu_scale(out, x, self.weight, x.shape[0], x.shape[1])
        return out
