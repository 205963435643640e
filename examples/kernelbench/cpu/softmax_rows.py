"""Row softmax over wide rows: every output is small (about 1/dim), so an all-zero output is within an absolute
tolerance of 1e-2 everywhere."""
import numpy as np

batch_size = 8
dim = 4096
SHAPES = [{"batch_size": 8, "dim": 4096}, {"batch_size": 3, "dim": 5001}]


class Model:
    def __init__(self):
        pass

    def forward(self, x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def get_inputs():
    return [np.random.randn(batch_size, dim).astype(np.float32)]


def get_init_inputs():
    return []
