# A KernelBench-format numpy problem whose inputs are all non-negative: every ReLU is the identity there.
import numpy as np

batch_size = 16
dim = 1000
SHAPES = [{"batch_size": 16, "dim": 1000}, {"batch_size": 7, "dim": 4099}]


class Model:
    def __init__(self):
        pass

    def forward(self, x):
        return np.maximum(x, np.float32(0.0))


def get_inputs():
    return [(np.random.rand(batch_size, dim) * 5).astype(np.float32)]


def get_init_inputs():
    return []
