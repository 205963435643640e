"""Level 2 style: a Linear layer (GEMM plus bias) followed by ReLU: a fused GEMM epilogue."""
import torch
import torch.nn as nn

batch_size = 2048
in_features = 2048
out_features = 2048
SHAPES = [{"batch_size": 2048, "in_features": 2048, "out_features": 2048},
          {"batch_size": 1000, "in_features": 1000, "out_features": 1500}]


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
