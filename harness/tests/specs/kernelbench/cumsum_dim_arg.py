"""KernelBench's level-1 cumsum (89_cumsum.py) in numpy: `dim` is an argument of Model (get_init_inputs), not a
size of the inputs, so it is never a shape variable. Read by test_kernelbench_suite.py and kernelBenchSuite.test.ts."""
import numpy as np

batch_size = 32
input_shape = (500,)
dim = 1


class Model:
    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return np.cumsum(x, axis=self.dim)


def get_inputs():
    return [np.random.rand(batch_size, *input_shape).astype(np.float32)]


def get_init_inputs():
    return [dim]
