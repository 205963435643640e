# The honest RMSNorm: eps added to the mean of squares, inside the square root.
import numpy as np

CPP_SOURCE = r"""
#include <cmath>
#include <cstdint>
extern "C" void rmsnorm(float* out, const float* x, int64_t rows, int64_t cols, double eps) {
  for (int64_t i = 0; i < rows; ++i) {
    double ss = 0.0;
    for (int64_t j = 0; j < cols; ++j) ss += (double)x[i * cols + j] * x[i * cols + j];
    const float inv = (float)(1.0 / std::sqrt(ss / cols + eps));
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = x[i * cols + j] * inv;
  }
}
"""


class ModelNew:
    def __init__(self, eps):
        self.eps = eps

    def forward(self, x):
        out = np.empty_like(x)
        cpp.rmsnorm(out, x, x.shape[0], x.shape[1], self.eps)  # noqa: F821
        return out
