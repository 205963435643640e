"""Level 1 style: sum reduction over dimension 1, keeping it."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
SHAPES = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 999, "dim": 5003}]


class Model(nn.Module):
    def __init__(self, reduce_dim: int):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.reduce_dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1]
