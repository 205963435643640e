"""RMSNorm over rows (KernelBench level 1, 36_RMSNorm_, its eps of 1e-5) in numpy, small, drawn with randn: at
unit scale eps is lost in the mean of squares, so where it is added changes nothing the problem's inputs show."""
import numpy as np

batch_size = 8
features = 1024
eps = 1e-5


class Model:
    def __init__(self, eps):
        self.eps = eps

    def forward(self, x):
        rms = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + np.float32(self.eps))
        return (x / rms).astype(np.float32)


def get_inputs():
    return [np.random.randn(batch_size, features).astype(np.float32)]


def get_init_inputs():
    return [eps]
