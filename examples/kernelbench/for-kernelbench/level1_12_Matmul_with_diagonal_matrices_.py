"""Our ModelNew for KernelBench's level1/12_Matmul_with_diagonal_matrices_: diag(A) @ B as a row scaling, one
read of B and one write of the output."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(a_ptr, b_ptr, out_ptr, M, stride_b, stride_o, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < M
    a = tl.load(a_ptr + row)
    b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_o + cols, a * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        B = B.contiguous()
        N, M = B.shape
        out = torch.empty_like(B)
        row_scale_kernel[(N, triton.cdiv(M, 2048))](A, B, out, M, B.stride(0), out.stride(0), BLOCK=2048, num_warps=8)
        return out
