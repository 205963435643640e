// The operator on its own, against the scripted server: which prompt each context gets, and what comes back.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/engine/candidate';
import { createLlmOperator } from '../../src/engine/llm/llmOperator';
import type { ProposalContext } from '../../src/engine/operator';
import { languageOf, sourceHash } from '../../src/engine/sourceText';
import { loadSpec, type KernelSpec } from '../../src/engine/spec';
import type { Verdict } from '../../src/contract/verdict';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';

let spec: KernelSpec;
let base: string;
let server: ScriptedLlmServer;
const variant = (tag: string) => `Rationale: variant ${tag}.\n\n\`\`\`cpp\nextern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {\n  // ${tag}\n  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;\n  for (int i = 0; i < M; ++i)\n    for (int k = 0; k < K; ++k)\n      for (int j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];\n}\n\`\`\``;

beforeAll(async () => {
  spec = await loadSpec(path.resolve(__dirname, '../../examples/cpp/matmul_blocked/spec.py'));
  base = readFileSync(spec.sourcePath, 'utf8');
  server = new ScriptedLlmServer([], { fallback: () => ({ kind: 'answer', content: variant(`r${server.requests.length}`) }) });
  await server.start();
});
afterAll(() => server.stop());

const ok = (speedup: number, bottleneck?: string): Verdict => ({ status: 'ok', reason: 'correct', speedup, ...(bottleneck ? { profile: { bottleneck } } : {}) });
function cand(id: string, parents: string[], verdict: Verdict, source = base + `// ${id}\n`): Candidate {
  return { id, parents, operator: parents.length ? 'llm' : 'baseline', mode: 'improve', source, hash: sourceHash(source, languageOf(spec.sourcePath)),
    state: 'done', verdict, rationale: `idea of ${id}`, timings: { proposedAt: 0 } };
}
function ctx(candidates: Candidate[], parent?: Candidate, extra: Partial<ProposalContext> = {}): ProposalContext {
  return { spec, baselineSource: base, candidates, parent, seen: new Set(candidates.map((c) => c.hash)), ...extra };
}
const operator = (extra = {}) => createLlmOperator({ model: 'gpt-4o-mini', baseURL: server.baseURL, apiKey: 'k', workspaceDir: path.join(__dirname, 'no-workspace'), ...extra });

describe('the LLM operator', () => {
  let c0: Candidate, a: Candidate, b: Candidate, a1: Candidate;
  beforeAll(() => {
    c0 = cand('c0000', [], ok(1));
    a = cand('c0001', ['c0000'], ok(2.0, 'memory-bound'));
    b = cand('c0002', ['c0000'], ok(1.5));
    a1 = cand('c0003', ['c0001'], ok(2.2));
  });

  it('drafts from the baseline when there is no parent', async () => {
    const n = server.requests.length;
    const batch = await operator().propose(ctx([c0]));
    expect(batch.proposals[0].mode).toBe('draft');
    expect(batch.proposals[0].parents).toEqual(['c0000']);
    expect(batch.proposals[0].rationale).toBe(`variant r${n}.`);
    expect(server.userPrompt(n)).toMatch(/^# Task: propose a new, faster implementation of `matmul`/);
    expect(batch.usage?.costUsd).toBeGreaterThan(0);
  });

  it('crosses the parent with the best candidate outside its line every Nth refinement', async () => {
    const op = operator({ crossoverEvery: 2 });
    const first = await op.propose(ctx([c0, a, b, a1], a));
    expect(first.proposals[0].mode).toBe('improve');
    const n = server.requests.length;
    const second = await op.propose(ctx([c0, a, b, a1], a));
    expect(second.proposals[0].mode).toBe('crossover');
    // a1 descends from a, so the partner is b
    expect(second.proposals[0].parents).toEqual(['c0001', 'c0002']);
    expect(server.userPrompt(n)).toContain('## Parent c0002: 1.50x the baseline');
  });

  it('retrieves notes by the host\'s hardware and the parent\'s bottleneck', async () => {
    const n = server.requests.length;
    await operator().propose(ctx([c0, a], a, { hardware: 'nvidia-h100' }));
    const prompt = server.userPrompt(n);
    expect(prompt).toContain('### When the kernel is memory-bound');
    expect(prompt).toContain('### Hopper (H100, H200), sm_90');
    expect(prompt).not.toContain('### C++ kernels on x86 CPUs');
  });

  it('turns an answer the run already has into an invalid proposal', async () => {
    const answerSource = (tag: string) => base.replace(/extern "C" void matmul[\s\S]*$/, variant(tag).split('```cpp\n')[1].split('\n```')[0] + '\n');
    const tag = `r${server.requests.length}`;
    const seen = new Set([sourceHash(answerSource(tag), 'clike')]);
    const batch = await operator().propose(ctx([c0, a], a, { seen }));
    expect(batch.proposals).toHaveLength(0);
    expect(batch.invalid?.[0].reason).toBe('the answer repeats a candidate this run already has');
  });

  it('gives up a parent after it answered it three times with code the run has', async () => {
    const seen = new Set([sourceHash(a.source, 'clike')]);
    const rep = new ScriptedLlmServer([], { fallback: { kind: 'answer', content: '```cpp\n' + a.source + '```' } });
    await rep.start();
    try {
      const o = createLlmOperator({ model: 'm', baseURL: rep.baseURL, apiKey: 'k', workspaceDir: path.join(__dirname, 'no-workspace') });
      const batches = [];
      for (let i = 0; i < 3; i++) batches.push(await o.propose(ctx([c0, a], a, { seen })));
      expect(batches.map((x) => !!x.exhausted)).toEqual([false, false, true]);
      expect(batches[2].invalid?.[0].reason).toMatch(/repeats the parent unchanged \(3 times from c0001; moving on from it\)/);
    } finally {
      await rep.stop();
    }
  });

  it('returns nothing when the run is stopped mid-request', async () => {
    const slow = new ScriptedLlmServer([{ kind: 'hang' }]);
    await slow.start();
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 200);
      const batch = await createLlmOperator({ model: 'm', baseURL: slow.baseURL, apiKey: 'k' }).propose(ctx([c0]), ac.signal);
      expect(batch).toEqual({ proposals: [] });
    } finally {
      await slow.stop();
    }
  });
});
