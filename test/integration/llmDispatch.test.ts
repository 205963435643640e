// The LLM operator proposes a per-shape dispatcher: once the run holds candidates that win different shapes, the
// prompt says so and offers a dispatch; the scripted model answers with one only when offered, and the real
// harness judges it on every shape of the spec, like any candidate. The real `openai` client, the scripted server
// on loopback, the real engine and the local host judging real C++ variants of the bundled blocked matmul.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EvolutionRun } from '../../src/engine/evolutionRun';
import { createLlmOperator } from '../../src/engine/llm/llmOperator';
import { RunStore } from '../../src/engine/runStore';
import { loadSpec } from '../../src/engine/spec';
import { HostPool } from '../../src/remote/hostPool';
import { LocalHost } from '../../src/remote/localHost';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';

const SPEC = path.resolve(__dirname, '../../examples/cpp/matmul_blocked/spec.py');

const ORIGINAL_LOOPS = `  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int j0 = 0; j0 < N; j0 += BLOCK_N) {
    const int j1 = std::min(j0 + BLOCK_N, N);
    for (int k0 = 0; k0 < K; k0 += BLOCK_K) {
      const int k1 = std::min(k0 + BLOCK_K, K);
      for (int i0 = 0; i0 < M; i0 += BLOCK_M) {
        const int i1 = std::min(i0 + BLOCK_M, M);
        for (int i = i0; i < i1; ++i) {
          for (int k = k0; k < k1; ++k) {
            const float a = A[i * K + k];
            for (int j = j0; j < j1; ++j) C[i * N + j] += a * B[k * N + j];
          }
        }
      }
    }
  }`;
const STREAMED = `    for (int i = 0; i < M; ++i) {
      float* __restrict c = C + (long)i * N;
      for (int j = 0; j < N; ++j) c[j] = 0.0f;
      for (int k = 0; k < K; ++k) {
        const float a = A[(long)i * K + k];
        const float* __restrict b = B + (long)k * N;
        for (int j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
    return;`;
const SIGNATURE = 'extern "C" void matmul(const float* __restrict A, const float* __restrict B, float* __restrict C, int M, int N, int K) {';

// Fast on the square shape, three times slower elsewhere (it computes the product three times there).
const SQUARE_ONLY = `Rationale: a streamed i-k-j loop for the square 128 problem, and for the others the blocked loops run three times to warm the caches.

\`\`\`cpp
${SIGNATURE}
  if (M == 128 && N == 128 && K == 128) {
${STREAMED}
  }
  for (int pass = 0; pass < 3; ++pass) {
${ORIGINAL_LOOPS.replace(/^/gm, '  ')}
  }
}
\`\`\`
`;
// The dispatch: the square shape's winner where it wins, the original code on every other shape.
const DISPATCH = `Rationale: per-shape dispatch: the streamed i-k-j loop wins the square 128 problem and the original blocked loops win the others, so the kernel picks by its sizes and keeps the original as the fallback.

\`\`\`cpp
${SIGNATURE}
  if (M == 128 && N == 128 && K == 128) {
${STREAMED}
  }
${ORIGINAL_LOOPS}
}
\`\`\`
`;
const GARBAGE = 'I would need to know more about the target machine first.';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'ke-llm-dispatch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the LLM operator and per-shape dispatch', () => {
  it('is offered a dispatch once candidates win different shapes, and its dispatcher is judged on every shape', async () => {
    const spec = await loadSpec(SPEC);
    const baselineSource = readFileSync(spec.sourcePath, 'utf8');
    const offered = (body: unknown) => JSON.stringify(body).includes('## The fastest code differs by shape');
    const server = new ScriptedLlmServer([{ kind: 'answer', content: SQUARE_ONLY }, (req) => ({ kind: 'answer', content: offered(req.body) ? DISPATCH : GARBAGE })],
      { fallback: { kind: 'answer', content: GARBAGE } });
    await server.start();
    const workspace = mkdtempSync(path.join(scratch, 'ws-'));
    const store = RunStore.create({ spec, options: { budget: 2 }, hosts: [{ name: 'local', slots: 1 }], workspace });
    const llm = createLlmOperator({ model: 'gpt-4o-mini', baseURL: server.baseURL, apiKey: 'test-key', stream: false, timeoutS: 20, retryBaseMs: 20,
      maxRetries: 1, workspaceDir: workspace, runDir: store.runDir, crossoverEvery: 0 });
    const run = new EvolutionRun({ runId: store.runId, runDir: store.runDir, spec, baselineSource, operators: [llm],
      evaluator: new HostPool([new LocalHost({ workdir: path.join(scratch, 'work') })]), limits: { budget: 2 }, draftBudget: 1 });
    run.on(store.listener);
    let summary;
    try {
      summary = await run.run();
    } finally {
      await server.stop();
    }

    const square = run.candidates.find((c) => c.source.includes('for (int pass = 0; pass < 3; ++pass)'))!;
    const byShape = (c: typeof square) => Object.fromEntries(c.verdict!.shapes!.map((s) => [`${s.shape.m}x${s.shape.n}x${s.shape.k}`, s.speedup]));
    expect(square.verdict?.status).toBe('ok');
    expect(byShape(square)['128x128x128']).toBeGreaterThan(1.3);
    expect(byShape(square)['130x257x96']).toBeLessThan(0.7);

    // the second prompt names who wins where and offers the dispatch
    const prompt = server.userPrompt(1);
    expect(prompt).toContain('## The fastest code differs by shape');
    expect(prompt).toContain(`| m=128,n=128,k=128 | ${square.id}: a streamed i-k-j loop`);
    expect(prompt).toContain('| m=130,n=257,k=96 | c0000 (the baseline) |');
    expect(prompt).toContain('You may answer with a per-shape dispatch');

    // the dispatcher: judged correct on every shape of the spec, faster on the square one, the original's speed elsewhere
    const dispatcher = run.candidates.find((c) => c.rationale?.startsWith('per-shape dispatch'))!;
    expect(dispatcher.verdict?.status).toBe('ok');
    const d = byShape(dispatcher);
    expect(Object.keys(d).sort()).toEqual(['128x128x128', '130x257x96', '97x160x211']);
    expect(d['128x128x128']).toBeGreaterThan(1.3);
    expect(d['130x257x96']).toBeGreaterThan(0.75);
    expect(d['97x160x211']).toBeGreaterThan(0.75);
    expect(summary.best?.id).toBe(dispatcher.id);
  });
});
