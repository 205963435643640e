// Does not compile on purpose.
extern "C" void scale(const float* x, float* y, int n, float a) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i]
}
