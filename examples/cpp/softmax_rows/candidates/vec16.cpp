// Row-wise softmax of a row-major float32 matrix: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
// VEC is the number of independent partial accumulators in the reductions (the tunable; 1 is poor: every
// step waits for the previous one).
#include <cmath>

constexpr int VEC = 16;

extern "C" void softmax(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<long>(r) * cols;
    float* yr = y + static_cast<long>(r) * cols;
    float m[VEC];
    for (int v = 0; v < VEC; ++v) m[v] = -INFINITY;
    int c = 0;
    for (; c + VEC <= cols; c += VEC)
      for (int v = 0; v < VEC; ++v) m[v] = xr[c + v] > m[v] ? xr[c + v] : m[v];
    float mx = -INFINITY;
    for (int v = 0; v < VEC; ++v) mx = m[v] > mx ? m[v] : mx;
    for (; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    float s[VEC];
    for (int v = 0; v < VEC; ++v) s[v] = 0.0f;
    c = 0;
    for (; c + VEC <= cols; c += VEC)
      for (int v = 0; v < VEC; ++v) {
        const float e = std::exp(xr[c + v] - mx);
        yr[c + v] = e;
        s[v] += e;
      }
    float sum = 0.0f;
    for (int v = 0; v < VEC; ++v) sum += s[v];
    for (; c < cols; ++c) {
      const float e = std::exp(xr[c] - mx);
      yr[c] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
