// A KernelBench-format problem (numpy, so it runs on this CPU) evolved by the bundled CLI: the real `openai`
// client against the scripted server, the real harness judging ModelNew files that call C++.
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';

const ROOT = path.resolve(__dirname, '../..');
const PROBLEM = path.join(ROOT, 'examples/kernelbench/cpu/relu_scale.py');
const GOOD = readFileSync(path.join(ROOT, 'examples/kernelbench/cpu/candidates/relu_scale.py'), 'utf8');
const answer = (code: string, why: string) => `Rationale: ${why}\n\n\`\`\`python\n${code}\`\`\`\n`;
const CHEAT = `import numpy as np


class ModelNew:
    def __init__(self, dim):
        self.weight = np.zeros(dim, dtype=np.float32)

    def forward(self, x):
        return np.maximum(x, 0) * self.weight
`;

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([
    { kind: 'answer', content: answer(CHEAT, 'numpy does it already.') },
    { kind: 'answer', content: answer(GOOD, 'one fused C++ loop over rows and columns.') },
  ], { fallback: { kind: 'answer', content: 'No better idea.' } });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('kernelevolve evolve --spec problem.py (KernelBench format)', () => {
  it('drafts ModelNew files with the LLM, refuses the one that calls numpy, and keeps the C++ one', async () => {
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'ke-kb-cli-')), 'run');
    const r = await runCli(cli, ['evolve', '--spec', PROBLEM, '--operators', 'llm', '--model', 'scripted', '--budget', '3', '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' });
    // 0, or 1 when the C++ loop does not beat numpy on this busy machine: correctness is what this test is about
    expect([0, 1], r.stderr).toContain(r.code);
    const result = JSON.parse(r.stdout);
    expect(result.candidates).toBeGreaterThanOrEqual(3);
    const system = server.requests[0].body.messages[0].content as string;
    expect(system).toContain('CPP_SOURCE');
    expect(system).toContain('class ModelNew');
    const verdicts = readFileSync(path.join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // each candidate's first verdict (a leader judged once more adds a confirmation row after it)
    const byId = Object.fromEntries(verdicts.filter((v) => v.verdict).map((v) => [v.id, v.verdict.status]));
    expect(byId.c0001).toBe('static_rejected'); // the numpy one
    expect(byId.c0002).toBe('ok'); // the C++ one
  });
});
