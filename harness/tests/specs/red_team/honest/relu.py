# The honest ReLU, its C++ function named relu: a user's own kernel is not a library call by its name.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void relu(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty_like(x)
        cpp.relu(out, x, x.size)  # noqa: F821
        return out
