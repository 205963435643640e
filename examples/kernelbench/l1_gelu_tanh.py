"""Level 1 style: GELU with the tanh approximation, elementwise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 4096
SHAPES = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 1023, "dim": 3001}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
