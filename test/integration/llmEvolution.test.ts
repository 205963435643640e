// Evolution runs with the LLM operator, end to end: the real `openai` client (plain and streamed) against the
// scripted server on loopback, the real engine, the local host and the real harness judging real C++ variants
// of the bundled blocked matmul.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/engine/events';
import { EvolutionRun } from '../../src/engine/evolutionRun';
import { createLlmOperator, type LlmOperatorOptions } from '../../src/engine/llm/llmOperator';
import { RunStore } from '../../src/engine/runStore';
import { loadSpec, type KernelSpec } from '../../src/engine/spec';
import { TuneOperator } from '../../src/engine/tuneOperator';
import { HostPool } from '../../src/remote/hostPool';
import { LocalHost } from '../../src/remote/localHost';
import { ScriptedLlmServer, type Script, type ScriptStep } from '../support/scriptedLlmServer';

const SPEC = path.resolve(__dirname, '../../examples/cpp/matmul_blocked/spec.py');

// What models really send: prose, then code. None of these is in the bundled example.
const GARBAGE = "I'm sorry, but I can't help optimize this code without knowing the target CPU. Could you share more details?";
const BROKEN = `Rationale: unroll the k loop by a compile-time factor so the compiler can keep several products in flight.

\`\`\`cpp
extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int i = 0; i < M; ++i) {
    for (int k = 0; k < K; k += UNROLL_K) {
      for (int j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];
    }
  }
}
\`\`\`
`;
const FAST = `Here is a faster version.

Rationale: the j-blocks of two columns defeat vectorization and reload A constantly; an i-k-j loop order with
restrict pointers streams rows of B and C contiguously, so GCC vectorizes the inner loop with AVX.

\`\`\`cpp
extern "C" void matmul(const float* __restrict A, const float* __restrict B, float* __restrict C, int M, int N, int K) {
  for (int i = 0; i < M; ++i) {
    float* __restrict c = C + (long)i * N;
    for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[(long)i * K + k];
      const float* __restrict b = B + (long)k * N;
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
\`\`\`
This should be several times faster.`;
const NOT_MATCHING = `Rationale: hoist the zeroing.
<<<<<<< SEARCH
  for (int idx = 0; idx < M * N; ++idx) C[idx] = 0;
=======
  std::fill(C, C + M * N, 0.0f);
>>>>>>> REPLACE`;

const answer = (content: string): ScriptStep => ({ kind: 'answer', content });

let spec: KernelSpec;
let baselineSource: string;
let scratch: string;

beforeAll(async () => {
  spec = await loadSpec(SPEC);
  baselineSource = readFileSync(spec.sourcePath, 'utf8');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'ke-llm-run-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface RunResult {
  server: ScriptedLlmServer;
  events: EngineEvent[];
  run: EvolutionRun;
  summary: Awaited<ReturnType<EvolutionRun['run']>>;
  runDir: string;
}

async function evolve(script: Script, opts: {
  stream: boolean; budget: number; fallback?: ScriptStep; llm?: Partial<LlmOperatorOptions>; workspace?: string; withTuner?: boolean;
  draftBudget?: number;
}): Promise<RunResult> {
  const server = new ScriptedLlmServer(script, { fallback: opts.fallback });
  await server.start();
  const events: EngineEvent[] = [];
  const workspace = opts.workspace ?? mkdtempSync(path.join(scratch, 'ws-'));
  const store = RunStore.create({ spec, options: { budget: opts.budget }, hosts: [{ name: 'local', slots: 1 }], workspace });
  const llm = createLlmOperator({
    model: 'gpt-4o-mini', baseURL: server.baseURL, apiKey: 'test-key', stream: opts.stream,
    timeoutS: 20, retryBaseMs: 20, maxRetries: 2, workspaceDir: workspace, runDir: store.runDir,
    onEvent: (e) => events.push(e), ...opts.llm,
  });
  const operators = opts.withTuner ? [new TuneOperator({ fileName: spec.sourcePath }), llm] : [llm];
  const run = new EvolutionRun({
    runId: store.runId, runDir: store.runDir, spec, baselineSource, operators,
    evaluator: new HostPool([new LocalHost({ workdir: path.join(scratch, 'work') })]),
    limits: { budget: opts.budget },
    draftBudget: opts.draftBudget,
  });
  run.on(store.listener);
  run.on((e) => events.push(e));
  try {
    const summary = await run.run();
    return { server, events, run, summary, runDir: store.runDir };
  } finally {
    await server.stop();
  }
}

const invalidReasons = (events: EngineEvent[]) => events.flatMap((e) => (e.type === 'proposal-invalid' ? [e.invalid.reason] : []));

for (const stream of [false, true]) {
  describe(`an LLM-driven run (${stream ? 'streamed' : 'plain'} answers)`, () => {
    let r: RunResult;
    beforeAll(async () => {
      r = await evolve([answer(GARBAGE), answer(BROKEN), answer(FAST)], { stream, budget: 5, fallback: answer(FAST) });
    });

    it('ends with the fast candidate as best after garbage and a compile error', () => {
      const fast = r.run.candidates.find((c) => c.source.includes('float* __restrict c = C'));
      const broken = r.run.candidates.find((c) => c.source.includes('UNROLL_K'));
      expect(broken?.verdict?.status).toBe('compile_error');
      expect(fast?.verdict?.status).toBe('ok');
      expect(r.summary.best?.id).toBe(fast!.id);
      expect(r.summary.best?.operator).toBe('llm');
      expect(r.summary.best!.speedup).toBeGreaterThan(2);
      expect(fast!.rationale).toMatch(/^the j-blocks of two columns defeat vectorization/);
      // The rest of the file (the constants, the include) is kept: the function was spliced in.
      expect(fast!.source).toContain('#include <algorithm>');
    });

    it('sends the compiler error in the prompt after the broken candidate', () => {
      const broken = r.run.candidates.find((c) => c.source.includes('UNROLL_K'))!;
      const judgedAt = broken.timings.finishedAt!;
      const after = r.server.requests.findIndex((q) => q.at >= judgedAt);
      expect(after).toBeGreaterThan(0);
      const prompt = r.server.userPrompt(after);
      expect(prompt).toMatch(/.UNROLL_K. was not declared in this scope/);
      expect(prompt).toContain('unroll the k loop by a compile-time factor');
      expect(r.server.requests.every((q) => q.stream === stream)).toBe(true);
    });

    it('counts the garbage and the repeated answers as invalid proposals, without stopping', () => {
      const reasons = invalidReasons(r.events);
      expect(reasons).toContain('the answer has no code block and does not define matmul');
      expect(reasons.some((x) => /repeats (a candidate|the parent)|the same program as/.test(x))).toBe(true);
      const finished = r.events.find((e) => e.type === 'run-finished');
      expect(finished && finished.type === 'run-finished' && finished.reason).toBe('budget');
    });

    it('reports token usage and cost per answer', () => {
      const usage = r.events.filter((e) => e.type === 'usage');
      expect(usage.length).toBe(r.server.requests.length);
      for (const u of usage) {
        if (u.type !== 'usage') continue;
        expect(u.promptTokens).toBeGreaterThan(100);
        expect(u.costUsd).toBeCloseTo((u.promptTokens * 0.15 + u.completionTokens * 0.6) / 1e6, 12);
      }
    });
  });
}

describe('an LLM-driven run through endpoint trouble', () => {
  it('goes on through 429s, 500s, a timeout, a dropped connection and malformed answers, and finds the fast one', async () => {
    const r = await evolve([
      { kind: 'status', status: 429, retryAfter: '0.2' }, answer(NOT_MATCHING), // call 1: rate-limited, then a bad edit
      { kind: 'status', status: 500 }, { kind: 'status', status: 503 }, { kind: 'status', status: 502 }, // call 2: retries exhausted
      { kind: 'answer', content: FAST, delayMs: 5000 }, { kind: 'drop', content: FAST, afterChars: 200 }, answer(FAST), // call 3
    ], { stream: true, budget: 5, fallback: answer('```cpp\nint main() { return 0; }\n```'), llm: { timeoutS: 1.5 } });
    expect(r.summary.best?.operator).toBe('llm');
    expect(r.summary.best!.speedup).toBeGreaterThan(2);
    const reasons = invalidReasons(r.events);
    expect(reasons).toEqual(expect.arrayContaining([
      expect.stringMatching(/SEARCH\/REPLACE block 1 of 1 does not match the parent/),
      expect.stringMatching(/no answer from the LLM: .*failed 3 times .*HTTP 502/),
      expect.stringMatching(/none of the answer's 1 code block\(s\) defines matmul/),
    ]));
    const logs = r.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logs.some((m) => /retrying/.test(m) && /429/.test(m))).toBe(true);
    expect(logs.some((m) => /no complete answer within 1.5 s/.test(m))).toBe(true);
    expect(logs.some((m) => /ended after \d+ characters|terminated|socket/i.test(m))).toBe(true);
    expect(r.server.requests[1].at - r.server.requests[0].at).toBeGreaterThanOrEqual(190);
  });

  it('stops asking a server that refuses the key, and the tuner carries the run', async () => {
    const r = await evolve([], { stream: false, budget: 4, withTuner: true, fallback: { kind: 'status', status: 401, message: 'Incorrect API key provided' } });
    expect(r.server.requests).toHaveLength(1);
    expect(r.summary.best?.operator).toBe('tune');
    const reasons = invalidReasons(r.events);
    expect(reasons.some((x) => /refused the API key .*set OPENAI_API_KEY/.test(x))).toBe(true);
  });
});

describe('repair under the default (greedy) policy', () => {
  it('hands the broken candidate back to the LLM with the compiler error, and judges the repair', async () => {
    // the second answer is the fix only when the prompt asks for a repair; asked to improve, it is garbage
    const r = await evolve([answer(BROKEN), (req) => answer(/# Task: repair `matmul`/.test(JSON.stringify(req.body?.messages)) ? FAST : GARBAGE)],
      { stream: false, budget: 2, draftBudget: 1, fallback: answer(GARBAGE), llm: { crossoverEvery: 0 } });
    const broken = r.run.candidates.find((c) => c.source.includes('UNROLL_K'))!;
    expect(broken.verdict?.status).toBe('compile_error');
    const prompt = r.server.userPrompt(1);
    expect(prompt).toContain(`# Task: repair \`matmul\``);
    expect(prompt).toContain(`FAILED: compile_error`);
    expect(prompt).toMatch(/.UNROLL_K. was not declared in this scope/);
    const repaired = r.run.candidates.find((c) => c.mode === 'repair');
    expect(repaired?.parents).toEqual([broken.id]);
    expect(repaired?.verdict?.status).toBe('ok');
    expect(r.summary.best?.id).toBe(repaired!.id);
  });
});

describe('past wins', () => {
  it('offers the wins of an earlier run in the workspace to the next run', async () => {
    const workspace = mkdtempSync(path.join(scratch, 'ws-wins-'));
    const first = await evolve([answer(FAST)], { stream: false, budget: 1, workspace });
    expect(first.summary.best?.operator).toBe('llm');
    const second = await evolve([answer(GARBAGE)], { stream: false, budget: 1, workspace });
    const prompt = second.server.userPrompt(0);
    expect(prompt).toContain('## Wins from earlier runs in this workspace');
    expect(prompt).toMatch(/x on matmul \(cpp, run [^)]+\): the j-blocks of two columns defeat vectorization/);
  });
});
