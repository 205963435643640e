// Wrong on purpose: the last element is never written.
extern "C" void scale(const float* x, float* y, int n, float a) {
  for (int i = 0; i < n - 1; ++i) y[i] = a * x[i];
}
