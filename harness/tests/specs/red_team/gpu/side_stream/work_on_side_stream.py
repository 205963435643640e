# Work left on a side stream (KernelBench's non_default_stream_kernel): the kernel is launched on a stream of its
# own and forward returns without waiting for it, so events recorded on the current stream around the call time
# nothing.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        with torch.cuda.stream(self.side):
            relu_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096, num_warps=8)
        return out
