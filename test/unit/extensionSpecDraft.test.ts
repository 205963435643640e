// Drafted specs must be specs the real harness accepts as they stand (the user reviews, not rewrites them).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSpecText } from '../../src/engine/spec';
import { KernelLocator } from '../../src/extension/kernelLocator';
import { draftSpec, findTritonLauncher } from '../../src/extension/specDraft';
import { findSpecs } from '../../src/extension/specLocator';

const dir = mkdtempSync(path.join(tmpdir(), 'ke-draft-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SAXPY = `// y = a * x + y
extern "C" void saxpy(float a, const float* __restrict__ x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
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

describe('draftSpec', () => {
  it('drafts a C++ spec from the signature that the harness judges ok, and the locator then finds it', async () => {
    const source = path.join(dir, 'saxpy.cpp');
    writeFileSync(source, SAXPY);
    const site = (await KernelLocator.get()).byName(SAXPY, 'cpp', 'saxpy')!;
    const draft = draftSpec(site, source, SAXPY);
    expect(draft.fileName).toBe('saxpy_spec.py');
    const specPath = path.join(dir, draft.fileName);
    writeFileSync(specPath, draft.text);
    const spec = parseSpecText(draft.text, specPath);
    expect(spec).toMatchObject({ backend: 'cpp', kernel: 'saxpy', sourcePath: source });
    expect(draft.text).toMatch(/^INPLACE = \[2\]$/m);
    const verdict = judge(specPath, source);
    expect(verdict.status, verdict.reason).toBe('ok');
    expect((await findSpecs([specPath, path.join(dir, 'nothing.py')], source, 'saxpy')).map((s) => s.specPath)).toEqual([specPath]);
    expect(await findSpecs([specPath], source, 'other')).toEqual([]);
  }, 120_000);

  it('launches a Triton kernel through the launcher in its file', async () => {
    const text = `import triton\n\n@triton.jit\ndef add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    pass\n\ndef add(x, y):\n    n = x.numel()\n    add_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n    return y\n`;
    expect(findTritonLauncher(text, 'add_kernel')).toEqual({ name: 'add', params: ['x', 'y'] });
    const site = (await KernelLocator.get()).byName(text, 'python', 'add_kernel')!;
    const draft = draftSpec(site, '/w/add.py', text);
    expect(draft.text).toMatch(/return k\.add\(\*args\)/);
    expect(parseSpecText(draft.text, '/w/add_kernel_spec.py')).toMatchObject({ backend: 'triton', kernel: 'add_kernel' });
  });
});
