"""Level 1 style: LayerNorm over the last dimension (nn.LayerNorm's weight and bias)."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
SHAPES = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 1000, "dim": 3000}]


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        with torch.no_grad():  # weights that are not all ones and zeros, so a kernel must read them
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
