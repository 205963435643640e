import { describe, expect, it } from 'vitest';
import { grammarFor, KernelLocator } from '../../../src/engine/kernelLocator';

const CPP = `#include <cstddef>
// café: a comment with non-ASCII text before the kernels
constexpr int BLOCK = 16;
static inline float helper(float x) { return x * 2; }

extern "C" void matmul(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = helper(a[i]) + b[i];
}

extern "C" {
void axpy(float alpha, const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] += alpha * x[i]; }
}

extern "C" float* scale(float* x, int n);
float* scale(float* x, int n) { return x; }

__global__ void add_kernel(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += x[i];
}
`;

const PY = `import triton
import triton.language as tl

def launcher(x):
    add[(1,)](x, 16)

@triton.autotune(configs=[], key=["n"])
@triton.jit
def add(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, 1.0)

@triton.jit
def softmax(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    pass
`;

describe('KernelLocator', () => {
  it('finds extern "C", extern "C" block, prototype-declared and __global__ kernels, not helpers', async () => {
    const loc = await KernelLocator.get();
    const ks = loc.find(CPP, 'cpp');
    expect(ks.map((k) => [k.name, k.kind])).toEqual([
      ['matmul', 'cpp'], ['axpy', 'cpp'], ['scale', 'cpp'], ['add_kernel', 'cuda'],
    ]);
    const m = ks[0];
    expect(CPP.slice(m.start, m.end)).toMatch(/^extern "C" void matmul\(.*\n[\s\S]*\n}$/);
    expect(m.params).toEqual(['a', 'b', 'c', 'n']);
    expect(m.signature).toBe('extern "C" void matmul(const float* a, const float* b, float* c, int n)');
    expect(ks[3].params).toEqual(['out', 'x', 'n']);
  });

  it('selects the kernel whose body holds the cursor and nothing elsewhere', async () => {
    const loc = await KernelLocator.get();
    const inBody = CPP.indexOf('c[i] = helper');
    expect(loc.at(CPP, 'cpp', inBody)?.name).toBe('matmul');
    expect(loc.at(CPP, 'cpp', CPP.indexOf('return x * 2'))).toBeUndefined();
    expect(loc.at(CPP, 'cpp', CPP.indexOf('threadIdx'))?.name).toBe('add_kernel');
  });

  it('finds @triton.jit functions with their decorators', async () => {
    const loc = await KernelLocator.get();
    const ks = loc.find(PY, 'python');
    expect(ks.map((k) => k.name)).toEqual(['add', 'softmax']);
    expect(PY.slice(ks[0].start, ks[0].end)).toMatch(/^@triton\.autotune[\s\S]*tl\.store\(x_ptr \+ pid, 1\.0\)$/);
    expect(ks[0].params).toEqual(['x_ptr', 'n', 'BLOCK']);
    expect(loc.at(PY, 'python', PY.indexOf('add[(1,)]'))).toBeUndefined();
    expect(loc.byName(PY, 'python', 'softmax')?.startLine).toBe(12);
  });

  it('maps files and language ids to grammars', () => {
    expect(grammarFor('cuda-cpp')).toBe('cpp');
    expect(grammarFor('/x/k.cu')).toBe('cpp');
    expect(grammarFor('python')).toBe('python');
    expect(grammarFor('markdown')).toBeUndefined();
  });
});
