// Drafted specs must be specs the real harness accepts as they stand, with arrays sized as the kernel indexes
// them, the dtypes it is written for, broadcast operands shaped as read, and a reference where one can be read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSpecText } from '../../src/engine/spec';
import { KernelLocator } from '../../src/engine/kernelLocator';
import { SizePolynomial } from '../../src/extension/sizePolynomial';
import { draftSpec } from '../../src/extension/specDraft';
import { describeEstimate, estimateCall } from '../../src/extension/specSizing';
import { findSpecs } from '../../src/extension/specLocator';

const dir = mkdtempSync(path.join(tmpdir(), 'ke-draft-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let locator: KernelLocator;
beforeAll(async () => { locator = await KernelLocator.get(); });

const SAXPY = `// y = a * x + y
extern "C" void saxpy(float a, const float* __restrict__ x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
`;

const MATMUL = `extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}
`;

const BIAS_GELU = `import torch
import triton
import triton.language as tl


@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, y_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offs % n_cols, mask=mask).to(tl.float32)
    h = x + b
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    n_cols = x.shape[-1]
    grid = (triton.cdiv(n, 1024),)
    bias_gelu_kernel[grid](x, b, y, n, n_cols, BLOCK=1024)
    return y
`;

function judge(spec: string, candidate: string): { status: string; reason: string } {
  const r = spawnSync(process.env.KERNELEVOLVE_PYTHON || 'python3', ['-m', 'kernelevolve_harness', 'evaluate', '--spec', spec, '--candidate', candidate, '--json'],
    { env: { ...process.env, PYTHONPATH: path.resolve('harness') }, encoding: 'utf8', timeout: 120_000 });
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`the harness printed no verdict: ${r.stdout}\n${r.stderr}`);
  }
}

function draftFor(name: string, fileName: string, text: string, callers: string[] = []) {
  const source = path.join(dir, fileName);
  writeFileSync(source, text);
  const site = locator.byName(text, fileName.endsWith('.py') ? 'python' : 'cpp', name);
  expect(site, `${name} is found as a kernel`).toBeDefined();
  const draft = draftSpec(locator, site!, source, text, callers);
  const specPath = path.join(dir, draft.fileName);
  writeFileSync(specPath, draft.text);
  return { source, specPath, draft };
}

function pythonParses(text: string): void {
  const r = spawnSync('python3', ['-c', 'import ast,sys; ast.parse(sys.stdin.read())'], { input: text, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

describe('SizePolynomial', () => {
  it('simplifies the largest index of A[i*K + k] over i < M, k < K to M*K', () => {
    const [M, K] = [SizePolynomial.symbol('M'), SizePolynomial.symbol('K')];
    const one = SizePolynomial.constant(1);
    const extent = M.sub(one).mul(K).add(K.sub(one)).add(one);
    expect(extent.equals(M.mul(K))).toBe(true);
    expect(extent.toString(['M', 'K'])).toBe('M*K');
    expect(extent.toPython(undefined, ['M', 'K'])).toBe('shape["M"] * shape["K"]');
  });
});

describe('draftSpec for C/C++', () => {
  it('sizes a matmul\'s arrays M*K, K*N, M*N, writes a reference, and the harness judges the baseline in seconds', () => {
    const { source, specPath, draft } = draftFor('matmul', 'matmul.cpp', MATMUL);
    expect(draft.text).toMatch(/# A: M\*K$/m);
    expect(draft.text).toMatch(/# B: K\*N$/m);
    expect(draft.text).toMatch(/# C: M\*N, written by the kernel$/m);
    expect(draft.text).toMatch(/^OUTPUTS = \[2\]$/m);
    expect(draft.text).toMatch(/^def reference\(A, B, C, M, N, K\):$/m);
    expect(draft.text).toContain('A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64)');
    expect(draft.estimate).toMatch(/one call at the largest shape: about/);
    expect(draft.warning).toBeUndefined();
    // Every shape has three different sizes, so a kernel that swaps M and N cannot pass.
    const shapes = [...draft.text.matchAll(/\{"M": (\d+), "N": (\d+), "K": (\d+)\}/g)].map((m) => m.slice(1).map(Number));
    expect(shapes).toHaveLength(3);
    for (const s of shapes) expect(new Set(s).size).toBe(3);
    const started = Date.now();
    const verdict = judge(specPath, source);
    expect(verdict.status, verdict.reason).toBe('ok');
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);

  it('reads the blocked example matmul (loops over blocks, std::min bounds) the same way', () => {
    const text = readFileSync('examples/cpp/matmul_blocked/matmul.cpp', 'utf8');
    const { draft, specPath, source } = draftFor('matmul', 'blocked.cpp', text);
    expect(draft.text).toMatch(/# A: M\*K$/m);
    expect(draft.text).toMatch(/# B: K\*N$/m);
    expect(draft.text).toMatch(/# C: M\*N, written by the kernel$/m);
    expect(draft.text).toMatch(/^# Reference: C = A @ B/m);
    expect(judge(specPath, source).status).toBe('ok');
  }, 120_000);

  it('drafts saxpy with y read and written and its formula as the reference; the locator then finds the spec', async () => {
    const { source, specPath, draft } = draftFor('saxpy', 'saxpy.cpp', SAXPY);
    expect(draft.fileName).toBe('saxpy_spec.py');
    expect(parseSpecText(draft.text, specPath)).toMatchObject({ backend: 'cpp', kernel: 'saxpy', sourcePath: source });
    expect(draft.text).toMatch(/^INPLACE = \[2\]$/m);
    expect(draft.text).toContain('return (a * x.astype(np.float64) + y.astype(np.float64)).astype(y.dtype)');
    const verdict = judge(specPath, source);
    expect(verdict.status, verdict.reason).toBe('ok');
    expect((await findSpecs([specPath, path.join(dir, 'nothing.py')], source, 'saxpy')).map((s) => s.specPath)).toEqual([specPath]);
  }, 120_000);

  it('says in the header when no reference can be read (softmax rows: reductions), and sizes through row pointers', () => {
    const text = readFileSync('examples/cpp/softmax_rows/softmax.cpp', 'utf8');
    const { draft, specPath, source } = draftFor('softmax', 'softmax.cpp', text);
    expect(draft.text).toMatch(/# x: rows\*cols$/m);
    expect(draft.text).toMatch(/# y: rows\*cols, written by the kernel$/m);
    expect(draft.text).toMatch(/^# Reference: none could be derived .* baseline's own outputs/m);
    expect(draft.text).not.toMatch(/^def reference/m);
    expect(judge(specPath, source).status).toBe('ok');
  }, 120_000);
});

describe('draftSpec for Triton', () => {
  it('shapes a broadcast bias as the kernel reads it (offs % n_cols), in the dtypes the kernel upcasts, with a torch reference', () => {
    const { draft, specPath } = draftFor('bias_gelu_kernel', 'bias_gelu.py', BIAS_GELU);
    pythonParses(draft.text);
    expect(parseSpecText(draft.text, specPath)).toMatchObject({ backend: 'triton', kernel: 'bias_gelu_kernel' });
    expect(draft.text).toMatch(/torch\.randn\(shape\["rows"\], shape\["n_cols"\], .*# x: \(rows, n_cols\)$/m);
    expect(draft.text).toMatch(/torch\.randn\(shape\["n_cols"\], .*# b: \(n_cols\)$/m);
    expect(draft.text).toMatch(/"dtype": "float16"/);
    expect(draft.text).toMatch(/"dtype": "bfloat16"/);
    expect(draft.text).toMatch(/return k\.bias_gelu\(\*args\)/);
    expect(draft.text).toMatch(/^def reference\(x, b\):$/m);
    expect(draft.text).toContain('torch.erf(');
    expect(draft.text).toContain('x.double()');
    expect(draft.text).toContain('b.double()');
  });

  it('launches the example softmax through its launcher, the output stored into, and no reference for a reduction', () => {
    const text = readFileSync('examples/triton/softmax/softmax.py', 'utf8');
    const { draft } = draftFor('softmax_kernel', 'softmax.py', text);
    pythonParses(draft.text);
    expect(draft.text).toMatch(/# x: \(rows, cols\)$/m);
    expect(draft.text).toMatch(/# y: \(rows, cols\), written by the kernel$/m);
    expect(draft.text).toMatch(/^OUTPUTS = \[1\]$/m);
    expect(draft.text).toMatch(/return k\.softmax\(\*args\)/);
    expect(draft.text).toMatch(/^# Reference: none could be derived/m);
  });

  it('reads a dimension the launcher leaves unnamed from the stride it passes and the kernel\'s mask (the example matmul)', () => {
    const text = readFileSync('examples/triton/matmul/matmul.py', 'utf8');
    const { draft } = draftFor('matmul_kernel', 'matmul.py', text);
    pythonParses(draft.text);
    expect(draft.text).toMatch(/# a: \(M, K\)$/m);
    expect(draft.text).toMatch(/# b: \(K, N\)$/m);
    expect(draft.text).toMatch(/# c: \(M, N\), written by the kernel$/m);
  });

  it('takes the dtypes the workspace calls the launcher with', () => {
    const { draft } = draftFor('bias_gelu_kernel', 'bias_gelu.py', BIAS_GELU.replace(/\.to\(tl\.float32\)/g, ''), ['x = torch.randn(8, 8, dtype=torch.bfloat16)\nbias_gelu(x, b)']);
    expect([...draft.text.matchAll(/"dtype": "(\w+)"/g)].map((m) => m[1])).toEqual(['bfloat16', 'bfloat16', 'bfloat16']);
  });

  it('drafts a kernel without a launcher as one-dimensional tensors of its mask bound', () => {
    const text = 'import triton\nimport triton.language as tl\n\n@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    m = offs < n\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)\n';
    const { draft } = draftFor('add_kernel', 'add.py', text);
    pythonParses(draft.text);
    expect(draft.text).toMatch(/# out_ptr: \(n\), written by the kernel$/m);
    expect(draft.text).toMatch(/k\.add_kernel\[grid\]\(\*args, BLOCK=1024\)/);
    expect(draft.text).toContain('return (x_ptr.double() + y_ptr.double()).to(out_ptr.dtype)');
  });

  it('offers no kernel (so no lens and no draft) for a @triton.jit function that does not parse', () => {
    const broken = 'import triton\n\n@triton.jit\ndef broken_kernel(x_ptr, n:\n    x = tl.load(x_ptr +)\n';
    expect(locator.find(broken, 'python').map((k) => k.name)).toEqual([]);
  });
});

describe('the cost estimate', () => {
  it('warns above the limits before any run', () => {
    const arrays = [{ name: 'A', extent: SizePolynomial.symbol('M').mul(SizePolynomial.symbol('N')).mul(SizePolynomial.symbol('K')), itemBytes: 4 }];
    const e = describeEstimate(estimateCall([{ M: 1000, N: 1000, K: 1000 }], arrays, undefined, 'cpu'));
    expect(e.line).toMatch(/3\.7 GiB of arrays/);
    expect(e.warning).toMatch(/make SHAPES smaller/);
  });
});
