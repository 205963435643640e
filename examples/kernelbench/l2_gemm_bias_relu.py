"""Level 2 style: a Linear layer (GEMM plus bias) followed by ReLU: a fused GEMM epilogue."""
import torch
import torch.nn as nn

batch_size = 2048
in_features = 2048
out_features = 2048
SHAPES = [{"batch_size": 2048, "in_features": 2048, "out_features": 2048},
          {"batch_size": 1000, "in_features": 1000, "out_features": 1500}]
# The GEMM through tl.dot rounds fp32 inputs to TF32: with nn.Linear's weights (|w| < 1/sqrt(in_features)) an error
# of about 2.3e-4 (one standard deviation) at every element, however small; KernelBench's fp32 rule (atol = rtol =
# 1e-4) refuses it. This example accepts TF32 on purpose: about 8 standard deviations, and 1e-2 of each element.
TOLERANCE = {"rtol": 1e-2, "atol": 2e-3}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
