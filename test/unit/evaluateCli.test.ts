// `kernelevolve evaluate` end to end: the built CLI, the local host and the real harness on the C++ examples.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempFolder } from '../support/tempFolders';

const root = path.resolve(__dirname, '..', '..');
const matmul = path.join(root, 'examples', 'cpp', 'matmul_blocked');

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'kernelevolve.js'), 'evaluate', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('kernelevolve evaluate (local host, C++ examples)', () => {
  beforeAll(() => {
    // `npm test` builds first; build here only when run alone on a fresh checkout (rebuilding while other
    // suites run the CLI would swap dist/ under them).
    if (existsSync(path.join(root, 'dist', 'cli.js'))) return;
    const b = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
    expect(b.status, b.stderr).toBe(0);
  }, 120_000);

  it('judges an honest faster candidate ok, exit 0, with a speedup in the JSON verdict', () => {
    const r = cli('--spec', path.join(matmul, 'spec.py'), '--candidate', path.join(matmul, 'candidates', 'tuned_blocks.cpp'), '--json');
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout.trim());
    expect(v.status).toBe('ok');
    expect(v.speedup).toBeGreaterThan(1.5);
    expect(v.shapes).toHaveLength(3);
    expect(v.host).toBe('local');
  }, 120_000);

  it('--help prints the command\'s usage and the exit codes, exit 0', () => {
    const r = cli('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('usage: kernelevolve evaluate --spec SPEC.py --candidate FILE');
    expect(r.stdout).not.toContain('usage: kernelevolve evolve');
    expect(r.stdout).toContain('Exit codes:');
  });

  it('prints a readable summary without --json', () => {
    const r = cli('--spec', path.join(matmul, 'spec.py'), '--candidate', path.join(matmul, 'matmul.cpp'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+\d+\.\d\dx/);
    expect(r.stdout).toContain('m=130 n=257 k=96');
  }, 120_000);

  it('judges a wrong candidate incorrect, exit 1, naming the shape', () => {
    const r = cli('--spec', path.join(matmul, 'spec.py'), '--candidate', path.join(matmul, 'candidates', 'only_multiples_of_16.cpp'), '--json');
    expect(r.code).toBe(1);
    const v = JSON.parse(r.stdout.trim());
    expect(v.status).toBe('incorrect');
    expect(v.reason).toMatch(/shape \{m=\d+, n=\d+, k=\d+\}/);
  }, 120_000);

  it('judges a cheating candidate static_rejected, exit 1', () => {
    const dir = tempFolder('ke-eval-');
    const src = readFileSync(path.join(matmul, 'matmul.cpp'), 'utf8').replace('#include <algorithm>', '#include <algorithm>\n#include <thread>')
      .replace('for (int i = 0; i < M * N; ++i) C[i] = 0.0f;', 'std::thread([=] { for (int i = 0; i < M * N; ++i) C[i] = 0.0f; }).join();');
    writeFileSync(path.join(dir, 'threaded.cpp'), src);
    const r = cli('--spec', path.join(matmul, 'spec.py'), '--candidate', path.join(dir, 'threaded.cpp'), '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout.trim()).status).toBe('static_rejected');
  }, 120_000);

  it('a spec the harness finds wrong is exit 2 with what to fix, not a host failure', () => {
    const dir = tempFolder('ke-eval-');
    copyFileSync(path.join(matmul, 'matmul.cpp'), path.join(dir, 'matmul.cpp'));
    const spec = readFileSync(path.join(matmul, 'spec.py'), 'utf8').replace(/SHAPES = \[[\s\S]*?\n\]/, 'SHAPES = []');
    writeFileSync(path.join(dir, 'spec.py'), spec);
    const r = cli('--spec', path.join(dir, 'spec.py'), '--candidate', path.join(dir, 'matmul.cpp'), '--json');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('SHAPES must be a non-empty list');
  }, 120_000);

  it('a spec without KERNEL is exit 2 before anything runs', () => {
    const dir = tempFolder('ke-eval-');
    copyFileSync(path.join(matmul, 'matmul.cpp'), path.join(dir, 'matmul.cpp'));
    writeFileSync(path.join(dir, 'spec.py'), readFileSync(path.join(matmul, 'spec.py'), 'utf8').replace('KERNEL = "matmul"', ''));
    const r = cli('--spec', path.join(dir, 'spec.py'), '--candidate', path.join(dir, 'matmul.cpp'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('KERNEL');
  }, 120_000);
  it('--inputs problem passes through to the harness: a HardSigmoid without its clamp is narrow_inputs by default, ok on the problem\'s inputs alone', () => {
    const dir = tempFolder('kernelevolve-inputs-');
    const candidate = path.join(dir, 'no_clamp.py');
    writeFileSync(candidate, [
      'import numpy as np', '', 'CPP_SOURCE = r"""', '#include <cstdint>',
      'extern "C" void hs(float* out, const float* x, int64_t n) { for (int64_t i = 0; i < n; ++i) out[i] = (x[i] + 3.0f) / 6.0f; }',
      '"""', '', '', 'class ModelNew:', '    def __init__(self):', '        pass', '',
      '    def forward(self, x):', '        out = np.empty_like(x)', '        cpp.hs(out, x, x.size)', '        return out', '',
    ].join('\n'));
    const problem = path.join(root, 'harness', 'tests', 'specs', 'narrow', 'hardsigmoid.py');
    const wide = cli('--spec', problem, '--candidate', candidate, '--json');
    expect(wide.code, wide.stderr).toBe(1);
    const v = JSON.parse(wide.stdout.trim());
    expect(v.status).toBe('narrow_inputs');
    expect(v.reason).toContain('all in [0, 1)');
    const alone = cli('--spec', problem, '--candidate', candidate, '--inputs', 'problem', '--json');
    expect(alone.code, alone.stderr).toBe(0);
    expect(JSON.parse(alone.stdout.trim()).status).toBe('ok');
    const wrong = cli('--spec', problem, '--candidate', candidate, '--inputs', 'narrow');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--inputs must be wide or problem');
  }, 240_000);
});
