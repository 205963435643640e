# The honest HardSigmoid: (x + 3) / 6 clamped to [0, 1] on every call.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void hardsigmoid(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] + 3.0f) / 6.0f;
    out[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
  }
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty_like(x)
        cpp.hardsigmoid(out, x, x.size)  # noqa: F821
        return out
