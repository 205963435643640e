"""A float32 matrix product (KernelBench level 1, 1_Square_matrix_multiplication_) in numpy, small: judged with
KernelBench's float32 tolerance (1e-4), which TF32 or fp16 arithmetic does not meet."""
import numpy as np

M = 64
K = 256
N = 48


class Model:
    def __init__(self):
        pass

    def forward(self, a, b):
        return np.matmul(a, b)


def get_inputs():
    return [np.random.randn(M, K).astype(np.float32), np.random.randn(K, N).astype(np.float32)]


def get_init_inputs():
    return []
