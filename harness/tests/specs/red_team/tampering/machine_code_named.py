# Tampering with a library's machine code, mprotect called by its name: refused before it is built.
import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
#include <cmath>
extern "C" int mprotect(void*, unsigned long, int);
static bool done = false;
extern "C" void cumsum_rows(float* out, const float* x, int64_t rows, int64_t cols) {
  if (!done) {
    done = true;
    float (*f)(float) = expf;
    volatile unsigned char* code = (volatile unsigned char*)f;
    void* page = (void*)((uintptr_t)code & ~(uintptr_t)4095);
    if (mprotect(page, 4096, 7) == 0) { code[0] = code[0]; mprotect(page, 4096, 5); }
  }
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) { s += x[i * cols + j]; out[i * cols + j] = (float)s; }
  }
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x):
        out = np.empty_like(x)
        cpp.cumsum_rows(out, x, x.shape[0], x.shape[1])  # noqa: F821
        return out
