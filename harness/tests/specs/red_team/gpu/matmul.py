"""A float32 matrix product (KernelBench level 1, 1_Square_matrix_multiplication_) in torch, small: judged with
KernelBench's float32 tolerance (1e-4), which TF32 and fp16 tensor-core inputs do not meet."""
import torch
import torch.nn as nn

M = 128
K = 256
N = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
