// `kernelevolve suite DIR` over this project's numpy problems (examples/kernelbench/cpu), the bundled CLI, the
// scripted OpenAI-compatible server answering each problem's prompt, and the real harness.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer, type RecordedRequest } from '../support/scriptedLlmServer';

const ROOT = path.resolve(__dirname, '../..');
const CPU = path.join(ROOT, 'examples/kernelbench/cpu');
const fence = (code: string) => `Rationale: one C++ pass.\n\n\`\`\`python\n${code}\`\`\`\n`;
const RELU = readFileSync(path.join(CPU, 'candidates/relu_scale.py'), 'utf8');
// a softmax that forgets to normalise: wrong, so that problem has no correct kernel
const SOFTMAX_WRONG = readFileSync(path.join(CPU, 'candidates/softmax_rows.py'), 'utf8').replace('o[j] *= inv;', 'o[j] *= 1.0f;');

function answerFor(req: RecordedRequest) {
  const user = String(req.body?.messages?.[1]?.content ?? '');
  return { kind: 'answer' as const, content: fence(/softmax/i.test(user) ? SOFTMAX_WRONG : RELU) };
}

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([], { fallback: answerFor });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('kernelevolve suite', () => {
  it('runs every problem of a folder and reports correct, speedups, fast_p, tokens and seconds', async () => {
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'ke-suite-')), 'suite');
    const r = await runCli(cli, ['suite', CPU, '--operators', 'llm', '--model', 'scripted', '--budget', '2', '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const byName = Object.fromEntries(result.problems.map((p: any) => [p.problem, p]));
    expect(Object.keys(byName).sort()).toEqual(['relu_scale', 'softmax_rows']);
    expect(byName.relu_scale.correct).toBe(true);
    expect(byName.relu_scale.speedupEager).toBeGreaterThan(0);
    expect(byName.relu_scale.tokens).toBeGreaterThan(0);
    expect(byName.relu_scale.evalSeconds).toBeGreaterThan(0);
    expect(readFileSync(byName.relu_scale.kernelFile, 'utf8')).toContain('class ModelNew');
    expect(byName.softmax_rows.correct).toBe(false);
    expect(byName.softmax_rows.note).toMatch(/^incorrect/);
    expect(result.fastP.eager['fast_0.0']).toBe(0.5);
    // numpy problems have no torch.compile baseline
    expect(byName.relu_scale.speedupCompile).toBeUndefined();
    expect(existsSync(path.join(out, 'suite.json'))).toBe(true);
    const table = readFileSync(path.join(out, 'suite.txt'), 'utf8');
    expect(table).toMatch(/relu_scale\s+yes/);
    expect(table).toMatch(/softmax_rows\s+no/);
    expect(table).toContain('fast_1.5');
  });

  it('says what a suite folder needs when it holds no problem', async () => {
    const r = await runCli(cli, ['suite', path.join(ROOT, 'examples/cpp')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no KernelBench-format problem/);
  });
});
