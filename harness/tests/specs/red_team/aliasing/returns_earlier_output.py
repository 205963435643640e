# Aliasing with an earlier call: one output buffer, allocated at the first call and returned by every call, so
# what the caller holds from an earlier call changes under it (and the allocation is never paid again).
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void relu(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""


class ModelNew:
    def __init__(self):
        self.out = None

    def forward(self, x):
        if self.out is None or self.out.shape != x.shape:
            self.out = np.empty_like(x)
        cpp.relu(self.out, x, x.size)  # noqa: F821
        return self.out
