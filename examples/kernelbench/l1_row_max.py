"""Level 1 style: max reduction over dimension 1."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
SHAPES = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 999, "dim": 5003}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
