// A tiled out-of-place transpose whose tiles are poor: a benchmark kernel for the tuner.
#include <algorithm>

constexpr int TR = 1;
constexpr int TC = 256;

extern "C" void transpose(const float* in, float* out, int rows, int cols) {
  for (int r0 = 0; r0 < rows; r0 += TR) {
    for (int c0 = 0; c0 < cols; c0 += TC) {
      const int r1 = std::min(r0 + TR, rows), c1 = std::min(c0 + TC, cols);
      for (int c = c0; c < c1; ++c) {
        for (int r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}
