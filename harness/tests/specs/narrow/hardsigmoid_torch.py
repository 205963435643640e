# A KernelBench-format torch problem drawn as KernelBench's HardSigmoid draws its inputs (torch.rand, in [0, 1)),
# at a size that fits any GPU.
import torch
import torch.nn as nn

batch_size = 1024
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardsigmoid(x)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
