"""Row softmax (KernelBench level 1, 23_Softmax) in numpy, small, drawn with randn (logits within about +-5, far
from exp's overflow at 88), on two shapes: the width a candidate could hard-code, and an odd one."""
import numpy as np

batch_size = 8
dim = 1024
SHAPES = [{"batch_size": 8, "dim": 1024}, {"batch_size": 3, "dim": 1537}]


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
