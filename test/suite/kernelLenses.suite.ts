/// <reference types="mocha" />
// Kernels are found in the three kinds of files a kernel engineer opens: Triton (Python), CUDA (.cu, the
// cuda-cpp language) and C++; helpers and launchers get no lens.
import * as assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { kernelEvolve, until, workspaceDir } from './extensionApi';

const FILES: Record<string, string> = {
  'softmax.py': `import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(in_ptr + row * n_cols + tl.arange(0, BLOCK))
    tl.store(out_ptr + row * n_cols + tl.arange(0, BLOCK), x)


def softmax(x, y):
    softmax_kernel[(x.shape[0],)](y, x, x.shape[1], BLOCK=1024)
    return y
`,
  // A kernel whose tl.exp / tl.max / tl.sum read like tensor calls, its launcher in PyTorch, and an operator of
  // its own: "Write a kernel" only over the operator, named for it.
  'row_softmax.py': `import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + tl.program_id(0) * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def row_softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    row_softmax_kernel[(x.shape[0],)](y, x, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.log(torch.softmax(x, dim=-1))
`,
  'axpby.cu': `__device__ float twice(float v) { return 2 * v; }

__global__ void axpby_kernel(float a, const float* x, float b, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b * twice(y[i]);
}

extern "C" void axpby(float a, const float* x, float b, float* y, int n) {
  axpby_kernel<<<(n + 255) / 256, 256>>>(a, x, b, y, n);
}
`,
};

async function lensTitles(file: string): Promise<string[]> {
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc);
  let titles: string[] = [];
  await until(`lenses in ${path.basename(file)}`, async () => {
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    titles = lenses.map((l) => l.command?.title ?? '').filter((t) => t.startsWith('KernelEvolve:'));
    return titles.length > 0;
  });
  return titles;
}

suite('Kernel CodeLenses', () => {
  const dir = path.join(workspaceDir(), 'kinds');

  suiteSetup(async () => {
    await kernelEvolve();
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(FILES)) writeFileSync(path.join(dir, name), text);
  });

  test('a @triton.jit function gets a lens, its launcher does not', async () => {
    assert.deepEqual(await lensTitles(path.join(dir, 'softmax.py')), ['KernelEvolve: Evolve softmax_kernel']);
  });

  test('a Triton kernel and its launcher: Evolve over the kernel only; "Write a kernel" only over an operator that has none, naming it', async () => {
    assert.deepEqual(await lensTitles(path.join(dir, 'row_softmax.py')), ['KernelEvolve: Evolve row_softmax_kernel', 'KernelEvolve: Write a kernel for log_softmax']);
  });

  test('a CUDA file: the __global__ kernel and the extern "C" launcher, not the __device__ helper', async () => {
    const doc = await vscode.workspace.openTextDocument(path.join(dir, 'axpby.cu'));
    assert.equal(doc.languageId, 'cuda-cpp');
    assert.deepEqual(await lensTitles(path.join(dir, 'axpby.cu')), ['KernelEvolve: Evolve axpby_kernel', 'KernelEvolve: Evolve axpby']);
  });
});
