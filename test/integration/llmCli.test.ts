// `kernelevolve evolve --operators llm` as a user runs it: the openai client configured by OPENAI_BASE_URL and
// OPENAI_API_KEY, the model from --model, the bundled CLI against the scripted server and the real harness.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';
import { tempFolder } from '../support/tempFolders';

const FAST = `Rationale: i-k-j order with restrict pointers lets GCC vectorize the inner loop over contiguous rows.

\`\`\`cpp
extern "C" void matmul(const float* __restrict A, const float* __restrict B, float* __restrict C, int M, int N, int K) {
  for (int i = 0; i < M; ++i) {
    float* __restrict c = C + (long)i * N;
    for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[(long)i * K + k];
      for (int j = 0; j < N; ++j) c[j] += a * B[(long)k * N + j];
    }
  }
}
\`\`\``;

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([{ kind: 'status', status: 429, retryAfter: '0.1' }, { kind: 'answer', content: 'No code today.' }, { kind: 'answer', content: FAST }],
    { fallback: { kind: 'answer', content: FAST } });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('kernelevolve evolve --operators llm', () => {
  it('uses OPENAI_BASE_URL, OPENAI_API_KEY and --model, and reports the LLM\'s fast candidate as best', async () => {
    const out = path.join(tempFolder('ke-llm-cli-'), 'run');
    const r = await runCli(cli, ['evolve', '--spec', 'examples/cpp/matmul_blocked/spec.py', '--operators', 'llm', '--model', 'gpt-4o-mini',
      '--budget', '3', '--json', '--out', out],
    { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-cli-test', KERNELEVOLVE_KNOWLEDGE_DIR: path.resolve(__dirname, '../../knowledge') });
    expect(r.stderr).not.toMatch(/not available in this build/);
    const result = JSON.parse(r.stdout);
    expect(result.best.operator).toBe('llm');
    expect(result.best.speedup).toBeGreaterThan(2);
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
    expect(server.requests[0].body.model).toBe('gpt-4o-mini');
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-cli-test');
    expect(server.userPrompt(1)).toContain('### C++ kernels on x86 CPUs');
  });

  it('says how to name a model when none is given', async () => {
    const r = await runCli(cli, ['evolve', '--spec', 'examples/cpp/matmul_blocked/spec.py', '--operators', 'llm', '--budget', '1'],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'k' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a model: pass --model NAME/);
  });
});
