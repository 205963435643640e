"""Level 1 style: RMSNorm over the last dimension, with a learned scale."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
SHAPES = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 1000, "dim": 3000}]


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
