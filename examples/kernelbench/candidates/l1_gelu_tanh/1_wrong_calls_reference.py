"""Wrong: calls the reference's own operator (torch.nn.functional.gelu) instead of a kernel."""
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")
