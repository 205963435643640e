"""Level 1 style: matrix multiplication C = A @ B (fp32 inputs; TF32 tensor cores qualify, TOLERANCE below)."""
import torch
import torch.nn as nn

M = 2048
N = 2048
K = 2048
SHAPES = [{"M": 2048, "N": 2048, "K": 2048}, {"M": 1000, "N": 1500, "K": 777}]
# Triton's tl.dot rounds fp32 inputs to TF32 (10-bit mantissa): over K = 2048 products of randn inputs that is an
# error of about 0.02 (one standard deviation) at every element, however small the element; KernelBench's fp32
# rule (atol = rtol = 1e-4) refuses it. This example accepts TF32 on purpose: 5 standard deviations, and 1e-2 of
# each element's size.
TOLERANCE = {"rtol": 1e-2, "atol": 0.1}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
