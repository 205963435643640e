"""Level 1 style: matrix multiplication C = A @ B (fp32 inputs; within rtol 1e-2, so TF32 tensor cores qualify)."""
import torch
import torch.nn as nn

M = 2048
N = 2048
K = 2048
SHAPES = [{"M": 2048, "N": 2048, "K": 2048}, {"M": 1000, "N": 1500, "K": 777}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
