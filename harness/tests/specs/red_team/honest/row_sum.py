# The honest row sum: each row summed in double precision.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void row_sum(float* out, const float* x, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) s += x[i * cols + j];
    out[i] = (float)s;
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
