"""Row prefix sums (KernelBench level 1, 89_cumsum) in numpy, small, drawn in [0, 1) as torch.rand draws them.
The problem's Model calls numpy.cumsum: what the baseline-tampering candidates rebind."""
import numpy as np

batch_size = 8
length = 2048


class Model:
    def __init__(self):
        pass

    def forward(self, x):
        return np.cumsum(x, axis=1, dtype=np.float32)


def get_inputs():
    return [np.random.rand(batch_size, length).astype(np.float32)]


def get_init_inputs():
    return []
