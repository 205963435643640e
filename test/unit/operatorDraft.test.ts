import { describe, expect, it } from 'vitest';
import { findOperators, pythonKernelNames } from '../../src/engine/operatorSource';
import { draftProblem, inputsFromCallSites, parseShapeText, problemOrigin } from '../../src/engine/problemDraft';
import { isKernelBenchProblem } from '../../src/engine/kernelBenchProblem';
import { planOperatorAccept } from '../../src/extension/operatorAccept';

const TORCH = `import torch
import torch.nn as nn
import torch.nn.functional as F
from .config import SCALE


def _helper(x):
    return x


@torch.no_grad()
def gelu_scale(x: torch.Tensor, scale: float = 0.5) -> torch.Tensor:
    """GELU, scaled."""
    return F.gelu(x) * scale


def plain(a, b):
    return a + b


class Block(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)

    def forward(self, x):
        return torch.relu(self.norm(x))


def run():
    block = Block(1024)
    h = torch.randn(8, 1024, device="cuda")
    return block(h), gelu_scale(torch.randn(16, 4096, dtype=torch.float16), 0.25)
`;

describe('PyTorch operators in a Python file', () => {
  it('finds the functions and nn.Modules that compute with torch, with their parameters', () => {
    const ops = findOperators(TORCH);
    expect(ops.map((o) => [o.name, o.kind, o.framework])).toEqual([['gelu_scale', 'function', 'torch'], ['Block', 'module', 'torch'], ['run', 'function', 'torch']]);
    const gelu = ops[0];
    expect(TORCH.split('\n')[gelu.startLine]).toBe('@torch.no_grad()');
    expect(gelu.params).toEqual([{ name: 'x', annotation: 'torch.Tensor' }, { name: 'scale', annotation: 'float', defaultText: '0.5' }]);
    expect(ops[1].params.map((p) => p.name)).toEqual(['x']);
    expect(ops[1].initParams.map((p) => p.name)).toEqual(['dim', 'eps']);
  });

  it('offers no kernel for a Triton kernel, nor for a launcher of one; an operator beside them still gets one', () => {
    const TRITON = `import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4)],
    key=["n_cols"],
)
@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(in_ptr + row * n_cols + tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + tl.arange(0, BLOCK), e / tl.sum(e, axis=0), mask=tl.arange(0, BLOCK) < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    softmax_kernel[lambda meta: (x.shape[0],)](y, x, x.shape[1])
    return y


@torch.jit.script
def log_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.log(torch.softmax(x, dim=-1))
`;
    expect(pythonKernelNames(TRITON)).toEqual(['softmax_kernel']);
    // the kernel (tl.exp, tl.max, tl.sum read like tensor calls) and its launcher have a kernel already; a
    // TorchScript function is still an operator in PyTorch
    expect(findOperators(TRITON).map((o) => o.name)).toEqual(['log_softmax']);
  });

  it('reads inputs from call sites: tensors with sizes and dtype, scalars, a module called through its instance', () => {
    const [gelu, block] = findOperators(TORCH);
    expect(inputsFromCallSites(gelu, [TORCH])).toEqual([
      { name: 'x', kind: 'array', dims: [16, 4096], dtype: 'float16' },
      { name: 'scale', kind: 'float', value: 0.25 },
    ]);
    expect(inputsFromCallSites(block, [TORCH])).toEqual([{ name: 'x', kind: 'array', dims: [8, 1024], dtype: 'float32' }]);
  });

  it('parses sizes as a user types them', () => {
    expect(parseShapeText('x', '4096, 1024 float16')).toEqual({ name: 'x', kind: 'array', dims: [4096, 1024], dtype: 'float16' });
    expect(parseShapeText('x', '64x128')).toEqual({ name: 'x', kind: 'array', dims: [64, 128], dtype: 'float32' });
    expect(parseShapeText('x', 'big')).toBeUndefined();
  });

  it('drafts a KernelBench-format problem for a module, its init argument named by the size it equals', () => {
    const block = findOperators(TORCH)[1];
    const draft = draftProblem({ operator: block, moduleText: TORCH, moduleFile: 'layers.py', inputs: [{ name: 'x', kind: 'array', dims: [8, 1024], dtype: 'float32' }], initArgs: ['1024'] });
    expect(draft.fileName).toBe('layers_Block_problem.py');
    expect(isKernelBenchProblem(draft.text)).toBe(true);
    expect(draft.text).toContain('class Model(Block):');
    expect(draft.text).toContain('return [torch.randn(n1, n2, dtype=torch.float32)]');
    expect(draft.text).toContain('def get_init_inputs():\n    return [n2]');
    expect(draft.text).toContain('SHAPES = [{"n1": 8, "n2": 1024}, {"n1": 7, "n2": 1023}]');
    expect(draft.text).not.toContain('from .config'); // relative imports do not work from the problem file
    expect(problemOrigin(draft.text)).toEqual({ moduleFile: 'layers.py', name: 'Block', kind: 'module' });
  });

  it('accepts a module kernel by making forward call it, as one edit of forward only', () => {
    const plan = planOperatorAccept({ moduleText: TORCH, moduleFile: 'layers.py', name: 'Block', backend: 'model-cuda', fallback: false, inPackage: true,
      candidate: 'import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n', provenance: 'run r, c0001' });
    if (!plan.ok) throw new Error(plan.reason);
    const after = TORCH.slice(0, plan.edit.start) + plan.edit.text + TORCH.slice(plan.edit.end);
    expect(plan.kernelFileName).toBe('layers_Block_kernel.py');
    expect(after).toContain('    def forward(self, x):\n        from .layers_Block_kernel import forward_kernel');
    expect(after).toContain('        return forward_kernel(self, x)\n\n\ndef run():');
    expect(after).toContain('self.norm = nn.LayerNorm(dim, eps=eps)'); // __init__ untouched
    expect(plan.kernelText).toContain('def forward_kernel(module, x):');
  });

  it('keeps the original body behind a device and dtype check when the fallback is asked for', () => {
    const plan = planOperatorAccept({ moduleText: TORCH, moduleFile: 'layers.py', name: 'gelu_scale', backend: 'model-cuda', fallback: true, dtype: 'float16',
      candidate: 'class ModelNew:\n    pass\n', provenance: 'p' });
    if (!plan.ok) throw new Error(plan.reason);
    const after = TORCH.slice(0, plan.edit.start) + plan.edit.text + TORCH.slice(plan.edit.end);
    expect(after).toContain('    """GELU, scaled."""\n    from layers_gelu_scale_kernel import gelu_scale_kernel');
    expect(after).toContain('    if x.is_cuda and x.dtype == torch.float16:');
    expect(after).toContain('        return gelu_scale_kernel(x, scale)\n    return F.gelu(x) * scale\n');
  });

  it('says so when the operator is gone', () => {
    const plan = planOperatorAccept({ moduleText: 'import torch\n', moduleFile: 'm.py', name: 'gone', backend: 'model-cuda', fallback: false, candidate: 'class ModelNew: pass', provenance: '' });
    expect(plan.ok).toBe(false);
  });
});
