"""Our ModelNew for KernelBench's level1/88_MinGPTNewGelu: the tanh GELU in one pass, as x * sigmoid(2u)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(out_ptr + offs, x * tl.sigmoid(2.0 * u), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        gelu_tanh_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
        return out
