// Never returns: the host must stop it and leave nothing running.
extern "C" void scale(const float* x, float* y, int n, float a) {
  volatile int spin = 1;
  while (spin) {
  }
  for (int i = 0; i < n; ++i) y[i] = a * x[i];
}
