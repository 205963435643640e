"""Row sums (KernelBench level 1, 47_Sum_reduction_over_a_dimension) in numpy, small: the red team's reuse,
deferral and precision candidates run on it."""
import numpy as np

batch_size = 8
dim = 16384


class Model:
    def __init__(self):
        pass

    def forward(self, x):
        return x.sum(axis=1)


def get_inputs():
    return [np.random.randn(batch_size, dim).astype(np.float32)]


def get_init_inputs():
    return []
