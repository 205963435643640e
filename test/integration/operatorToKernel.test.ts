// From a numpy operator to an accepted kernel file, the way "Write a kernel for this" goes, with the editor's
// parts that are plain code: the operator found in its module, its inputs read from a call site, a
// KernelBench-format problem drafted; the bundled CLI evolving it with the scripted server and the real
// harness; the winning ModelNew accepted next to the module, and the module then run by Python.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperators } from '../../src/engine/operatorSource';
import { draftProblem, inputsFromCallSites, problemOrigin } from '../../src/engine/problemDraft';
import { planOperatorAccept } from '../../src/extension/operatorAccept';
import { bundleCli, runCli } from '../support/sshCli';
import { SCALED_RELU_KERNEL } from '../support/scaledReluOperator';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';
import { tempFolder } from '../support/tempFolders';

const MODULE = `import numpy as np


def scaled_relu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ReLU, then a scale per column."""
    y = np.maximum(x, 0)
    return y * w


def main():
    x = np.random.randn(64, 300).astype(np.float32)
    w = np.random.rand(300).astype(np.float32)
    print(scaled_relu(x, w).sum())
`;

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([{ kind: 'answer', content: `Rationale: one fused loop.\n\n\`\`\`python\n${SCALED_RELU_KERNEL}\`\`\`\n` }],
    { fallback: { kind: 'answer', content: 'Nothing better.' } });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('a numpy operator to an accepted kernel file', () => {
  it('drafts a problem from the operator, evolves it, and the accepted module computes through the kernel', async () => {
    const dir = tempFolder('ke-operator-');
    writeFileSync(path.join(dir, 'mylib.py'), MODULE);
    const [op] = findOperators(MODULE);
    expect(op).toMatchObject({ name: 'scaled_relu', kind: 'function', framework: 'numpy' });
    const inputs = inputsFromCallSites(op, [MODULE]);
    expect(inputs).toEqual([
      { name: 'x', kind: 'array', dims: [64, 300], dtype: 'float32' },
      { name: 'w', kind: 'array', dims: [300], dtype: 'float32' },
    ]);
    const draft = draftProblem({ operator: op, moduleText: MODULE, moduleFile: 'mylib.py', inputs: inputs! });
    const problem = path.join(dir, draft.fileName);
    writeFileSync(problem, draft.text);
    expect(draft.text).toContain('SHAPES = [{"n1": 64, "n2": 300}, {"n1": 63, "n2": 299}]');

    const out = path.join(dir, 'run');
    const r = await runCli(cli, ['evolve', '--spec', problem, '--operators', 'llm', '--model', 'scripted', '--budget', '2', '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' });
    // Correct is what matters here: whether a C++ loop beats numpy on this busy machine is not this test's business.
    const result = JSON.parse(r.stdout);
    const judged = readFileSync(path.join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const winner = judged.find((j) => j.id !== 'c0000' && j.verdict.status === 'ok');
    expect(winner, r.stderr).toBeDefined();

    const origin = problemOrigin(readFileSync(problem, 'utf8'))!;
    expect(origin).toEqual({ moduleFile: 'mylib.py', name: 'scaled_relu', kind: 'function' });
    const plan = planOperatorAccept({
      moduleText: MODULE, moduleFile: origin.moduleFile, name: origin.name, backend: 'model-cpu', fallback: true,
      candidate: readFileSync(path.join(out, 'candidates', `${winner.id}.py`), 'utf8'),
      provenance: `run ${result.runId}, ${winner.id}`,
    });
    if (!plan.ok) throw new Error(plan.reason);
    writeFileSync(path.join(dir, plan.kernelFileName), plan.kernelText);
    writeFileSync(path.join(dir, 'mylib.py'), MODULE.slice(0, plan.edit.start) + plan.edit.text + MODULE.slice(plan.edit.end));

    const check = `
import numpy as np, mylib, mylib_scaled_relu_kernel as k
x = np.random.randn(37, 101).astype(np.float32); w = np.random.rand(101).astype(np.float32)
y = mylib.scaled_relu(x, w)
assert k._model is not None, "the float32 call did not go through the kernel"
assert np.allclose(y, np.maximum(x, 0) * w, rtol=1e-6, atol=1e-6)
x64 = x.astype(np.float64)
assert np.allclose(mylib.scaled_relu(x64, w), np.maximum(x64, 0) * w)  # the fallback: the original body
print("ok")
`;
    const py = spawnSync('python3', ['-c', check], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: dir } });
    expect(py.stderr).toBe('');
    expect(py.stdout.trim()).toBe('ok');
    expect(readFileSync(path.join(dir, 'mylib.py'), 'utf8')).toContain('from mylib_scaled_relu_kernel import scaled_relu_kernel');
  });
});
