"""ReLU in numpy, one shape, on inputs drawn non-negative (np.random.rand): every ReLU is the identity there, so
a candidate may return its own input and still read right."""
import numpy as np

batch_size = 16
dim = 1024


class Model:
    def __init__(self):
        pass

    def forward(self, x):
        return np.maximum(x, np.float32(0.0))


def get_inputs():
    return [np.random.rand(batch_size, dim).astype(np.float32)]


def get_init_inputs():
    return []
