"""Wrong: calls the Linear layer (the reference's own GEMM) and writes only the ReLU as a kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.linear(x)
        out = torch.empty_like(y)
        n = y.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](y, out, n, BLOCK=4096, num_warps=8)
        return out
