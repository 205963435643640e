// One reading of a spec: the harness's `describe-spec`, which the CLI and the run starter use, agrees with the
// editor's quick text reading on every example, and a spec the harness refuses is refused before anything runs.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKENDS, SpecError } from '../../src/contract/spec';
import { loadSpec } from '../../src/engine/spec';
import { describeSpec, kernelSpecOf } from '../../src/remote/specDescription';
import { modelSystemMessage } from '../../src/engine/llm/modelPrompt';
import { tempFolder } from '../support/tempFolders';

const root = path.resolve(__dirname, '..', '..');

function exampleSpecs(): string[] {
  const out: string[] = [];
  for (const kind of readdirSync(path.join(root, 'examples'))) {
    for (const name of readdirSync(path.join(root, 'examples', kind))) {
      const dir = path.join(root, 'examples', kind, name);
      const spec = path.join(dir, 'spec.py');
      try {
        readdirSync(dir);
      } catch {
        if (name.endsWith('.py')) out.push(dir); // a KernelBench problem file is its own spec
        continue;
      }
      if (readdirSync(dir).includes('spec.py')) out.push(spec);
    }
  }
  return out;
}

const HIP = 'BACKEND = "hip"\nSOURCE = "k.hip"\nKERNEL = "k"\nSHAPES = [{"n": 1}]\n' +
  'def inputs(shape, seed):\n    return ()\n\ndef launch(k, *args):\n    return None\n';

describe('describe-spec', () => {
  it('agrees with the text reading on every example', async () => {
    const specs = exampleSpecs();
    expect(specs.length).toBeGreaterThanOrEqual(5);
    for (const spec of specs) {
      const d = await describeSpec(spec);
      const t = await loadSpec(spec);
      expect({ spec, backend: d.backend, sourcePath: d.sourcePath, kernel: d.kernel })
        .toEqual({ spec, backend: t.backend, sourcePath: t.sourcePath, kernel: t.kernel });
    }
  }, 120_000);

  it('tells the LLM the judge\'s own tolerance for a KernelBench problem (float32 to 1e-4), and a problem\'s own TOLERANCE where it has one', async () => {
    const problem = path.join(root, 'examples', 'kernelbench', 'cpu', 'relu_scale.py');
    const d = await describeSpec(problem);
    expect(d.judgedTolerance?.float32).toEqual({ rtol: 1e-4, atol: 1e-4 });
    const prompt = modelSystemMessage(kernelSpecOf(d), undefined);
    expect(prompt).toContain('float32 rtol 0.0001 atol 0.0001');
    expect(prompt).not.toMatch(/rtol 1e-2/);
    const own = path.join(tempFolder('ke-tol-'), 'loose.py');
    writeFileSync(own, `${readFileSync(problem, 'utf8')}\nTOLERANCE = {"float32": {"rtol": 0.001, "atol": 0.002}}\n`);
    expect(modelSystemMessage(kernelSpecOf(await describeSpec(own)), undefined)).toContain('float32 rtol 0.001 atol 0.002');
  }, 60_000);

  it('names the same backends as the harness', () => {
    const r = spawnSync('python3', ['-m', 'kernelevolve_harness', 'describe-spec', '--spec', path.join(root, 'examples', 'cpp', 'matmul_blocked', 'spec.py')],
      { env: { ...process.env, PYTHONPATH: path.join(root, 'harness') }, encoding: 'utf8' });
    expect([...(JSON.parse(r.stdout) as { backends: string[] }).backends].sort()).toEqual([...BACKENDS].sort());
  });

  it('refuses a hip spec up front with the harness\'s sentence, in the text reading too', async () => {
    const dir = tempFolder('ke-hip-');
    writeFileSync(path.join(dir, 'k.hip'), '__global__ void k() {}\n');
    writeFileSync(path.join(dir, 'spec.py'), HIP);
    const err = await describeSpec(path.join(dir, 'spec.py')).then(() => undefined, (e: Error) => e);
    expect(err).toBeInstanceOf(SpecError);
    expect(err!.message).toMatch(/spec\.py: BACKEND is "hip"; this harness supports cpp, triton, cuda/);
    await expect(loadSpec(path.join(dir, 'spec.py'))).rejects.toThrow(/BACKEND is "hip"/);

    const started = Date.now();
    const cli = spawnSync(process.execPath, [path.join(root, 'bin', 'kernelevolve.js'), 'evaluate', '--spec', path.join(dir, 'spec.py'),
      '--candidate', path.join(dir, 'k.hip'), '--json'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(cli.status).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toMatch(/BACKEND is "hip"; this harness supports/);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it('says so when the spec changed to something the harness refuses (no stale answer)', async () => {
    const dir = tempFolder('ke-desc-');
    writeFileSync(path.join(dir, 'k.cpp'), 'extern "C" void k() {}\n');
    const spec = path.join(dir, 'spec.py');
    writeFileSync(spec, HIP.replace('"hip"', '"cpp"').replace('k.hip', 'k.cpp'));
    expect((await describeSpec(spec)).shapes).toEqual([{ n: 1 }]);
    writeFileSync(spec, HIP.replace('"hip"', '"cpp"').replace('k.hip', 'k.cpp').replace('SHAPES = [{"n": 1}]\n', '# no sizes yet\n'));
    await expect(describeSpec(spec)).rejects.toThrow(/does not define SHAPES/);
  });
});
