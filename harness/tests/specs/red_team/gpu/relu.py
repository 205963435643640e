"""ReLU (KernelBench level 1, 19_ReLU) in torch, small enough for any GPU, drawn with randn so that the output
is never the input: the GPU red team's problem for timing detection, side streams, lazy outputs and freed
memory."""
import torch
import torch.nn as nn

batch_size = 256
dim = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
