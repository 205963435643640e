// The numpy operator the "Write a kernel" scenarios start from (the code-server test and the in-editor suite),
// and the C++ ModelNew the scripted LLM answers for it (those two and the CLI test operatorToKernel.test.ts).

/** The module with the operator and a call site that fixes its inputs' shapes (rows x cols, w of cols). */
export function scaledReluModule(rows: number, cols: number): string {
  return `import numpy as np


def scaled_relu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ReLU, then a scale per column."""
    return np.maximum(x, 0) * w


def demo():
    x = np.random.randn(${rows}, ${cols}).astype(np.float32)
    w = np.random.rand(${cols}).astype(np.float32)
    return scaled_relu(x, w)
`;
}

export const SCALED_RELU_KERNEL = `import numpy as np

CPP_SOURCE = r"""
#include <cstdint>
extern "C" void scaled_relu(float* out, const float* x, const float* w, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const float v = x[i * cols + j];
      out[i * cols + j] = (v > 0.0f ? v : 0.0f) * w[j];
    }
}
"""


class ModelNew:
    def __init__(self):
        pass

    def forward(self, x, w):
        out = np.empty_like(x)
        cpp.scaled_relu(out, x, w, x.shape[0], x.shape[1])
        return out
`;
