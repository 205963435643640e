import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectKnobs, knobValues } from '../../../src/engine/knobs';
import type { EngineEvent } from '../../../src/engine/events';
import { EvolutionRun, type EvolutionOptions } from '../../../src/engine/evolutionRun';
import type { Operator, ProposalBatch, ProposalContext } from '../../../src/engine/operator';
import type { KernelSpec } from '../../../src/engine/spec';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { LandscapeEvaluator, MATMUL, matmulLandscape } from './landscape';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };

function make(opts: Partial<EvolutionOptions> & { evaluator?: EvolutionOptions['evaluator'] }) {
  const events: EngineEvent[] = [];
  const run = new EvolutionRun({
    runId: 'r', runDir: '/tmp/r', spec, baselineSource: MATMUL,
    operators: [new TuneOperator({ fileName: 'matmul.cpp' })],
    evaluator: new LandscapeEvaluator(matmulLandscape, MATMUL),
    limits: { budget: 10 },
    ...opts,
  });
  run.on((e) => events.push(e));
  return { run, events };
}

/** Always answers with the same program: the engine must judge it once and still end. */
class RepeatingOperator implements Operator {
  readonly name = 'repeat';
  calls = 0;
  async propose(ctx: ProposalContext): Promise<ProposalBatch> {
    this.calls++;
    return { proposals: [{ source: ctx.baselineSource.replace('BLOCK_N = 16', 'BLOCK_N = 32'), parents: ['c0000'], operator: this.name }] };
  }
}

class GarbageOperator implements Operator {
  readonly name = 'garbage';
  async propose(): Promise<ProposalBatch> {
    return { proposals: [], invalid: [{ operator: this.name, reason: 'no code block in the answer' }] };
  }
}

class FailingOperator implements Operator {
  readonly name = 'failing';
  async propose(): Promise<ProposalBatch> {
    throw new Error('the endpoint refused the connection');
  }
}

describe('EvolutionRun', () => {
  it('judges the baseline (c0000) first, against itself, before anything is proposed', async () => {
    const { run, events } = make({});
    await run.run();
    const firstProposal = events.findIndex((e) => e.type === 'candidate-proposed' && e.candidate.id === 'c0001');
    const baselineJudged = events.findIndex((e) => e.type === 'candidate-evaluated' && e.candidate.id === 'c0000');
    expect(baselineJudged).toBeGreaterThan(-1);
    expect(baselineJudged).toBeLessThan(firstProposal);
    expect(run.candidates[0].verdict!.speedup).toBeCloseTo(1, 6);
    expect(run.candidates[0].operator).toBe('baseline');
  });

  it('judges the tuner\'s drafts beside the baseline where the pool has room; an operator that does not speculate waits for its verdict', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL, 4, 30);
    const { run, events } = make({ evaluator, limits: { budget: 10 } });
    await run.run();
    const baselineJudged = events.findIndex((e) => e.type === 'candidate-evaluated' && e.candidate.id === 'c0000');
    const startedBefore = events.slice(0, baselineJudged).filter((e) => e.type === 'candidate-started' && e.id !== 'c0000');
    expect(startedBefore.length).toBe(3); // the pool's other three slots
    expect(run.candidates.filter((c) => startedBefore.some((e) => e.type === 'candidate-started' && e.id === c.id))
      .every((c) => c.operator === 'tune' && c.verdict?.status === 'ok')).toBe(true);
    expect(run.candidates[0].verdict!.speedup).toBeCloseTo(1, 6);

    const waiting = new RepeatingOperator();
    const second = make({ evaluator: new LandscapeEvaluator(matmulLandscape, MATMUL, 4, 30), operators: [waiting], limits: { budget: 3 } });
    let callsBeforeVerdict = -1;
    second.run.on((e) => {
      if (e.type === 'candidate-evaluated' && e.candidate.id === 'c0000') callsBeforeVerdict = waiting.calls;
    });
    await second.run.run();
    expect(callsBeforeVerdict).toBe(0);
    expect(waiting.calls).toBe(3);
  });

  it('starts from the baseline\'s neighbours beside it when the tuner has no drafts (a C++ kernel with one constant)', async () => {
    const source = readFileSync(path.join(__dirname, '../../../examples/cpp/softmax_rows/softmax.cpp'), 'utf8');
    const vec = (text: string) => knobValues(detectKnobs(text, 'clike')).VEC;
    const starts: string[] = [];
    let baselineDone = false;
    const evaluator = {
      totalSlots: 4,
      evaluate: async (job: { id: string; candidateSource: string }) => {
        if (!baselineDone) starts.push(job.id);
        await new Promise((r) => setTimeout(r, 30));
        if (job.id === 'c0000') baselineDone = true;
        const speedup = vec(job.candidateSource) / vec(source) > 1 ? 1 + Math.log2(vec(job.candidateSource)) / 10 : 1;
        return { status: 'ok' as const, reason: 'Correct.', speedup, host: 'h' };
      },
    };
    const { run } = make({ baselineSource: source, spec: { ...spec, sourcePath: '/x/softmax.cpp', kernel: 'softmax_rows' },
      operators: [new TuneOperator({ fileName: 'softmax.cpp' })], evaluator, limits: { budget: 6 } });
    await run.run();
    expect(run.candidates.some((c) => c.mode === 'draft')).toBe(false);
    // the baseline and three of its neighbours (and theirs: the baseline counts 1 while it is judged) at once
    expect(starts.length).toBe(4);
    const beside = run.candidates.filter((c) => starts.includes(c.id) && c.id !== 'c0000');
    expect(beside[0].parents).toEqual(['c0000']);
    expect(beside.every((c) => c.operator === 'tune' && c.speculative)).toBe(true);
  });

  it('stops the drafts judged beside a baseline that is not ok, and ends with the baseline\'s error', async () => {
    const broken = MATMUL.replace('BLOCK_M = 64', 'BLOCK_M = 1024').replace('BLOCK_K = 16', 'BLOCK_K = 1024');
    const slow = new LandscapeEvaluator(matmulLandscape, broken, 4, 30);
    const evaluator = {
      totalSlots: 4,
      // the baseline's verdict comes first; the drafts beside it are still being judged then
      evaluate: (job: Parameters<typeof slow.evaluate>[0], o?: Parameters<typeof slow.evaluate>[1]) => (job.id === 'c0000'
        ? slow.evaluate(job, o) : new Promise<never>((_, reject) => o?.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))),
    };
    const { run, events } = make({ baselineSource: broken, evaluator, limits: { budget: 10 } });
    const summary = await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.reason).toBe('error');
    expect(finished?.type === 'run-finished' && finished.error?.kind).toBe('baseline');
    expect(run.candidates.length).toBeGreaterThan(1);
    expect(run.candidates.slice(1).every((c) => !c.verdict && c.state === 'queued')).toBe(true);
    expect(summary.best?.id ?? 'c0000').toBe('c0000');
  });

  it('keeps every slot of the pool busy while operators propose', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL, 3, 15);
    const { run } = make({ evaluator, limits: { budget: 15 } });
    const summary = await run.run();
    expect(evaluator.maxConcurrent).toBe(3);
    expect(summary.candidates).toBe(16);
  });

  it('judges identical programs once, and a repeating operator still ends the run by budget', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    const op = new RepeatingOperator();
    const { run, events } = make({ evaluator, operators: [op], limits: { budget: 6 } });
    await run.run();
    // judged once as a candidate, then once more for its figure: the run's only contender has nothing to be ranked against
    expect(evaluator.jobs).toEqual(['c0000', 'c0001', 'c0001-confirm1']);
    expect(op.calls).toBe(6);
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished && finished.type === 'run-finished' && finished.reason).toBe('budget');
    expect(events.filter((e) => e.type === 'proposal-invalid').length).toBe(5);
  });

  it('counts garbage answers against the budget', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    const { run, events } = make({ evaluator, operators: [new GarbageOperator()], limits: { budget: 4 } });
    const summary = await run.run();
    expect(evaluator.jobs).toEqual(['c0000']);
    expect(summary.candidates).toBe(1);
    const last = events.filter((e) => e.type === 'progress').pop();
    expect(last && last.type === 'progress' && last.invalid).toBe(4);
  });

  it('drops an operator that keeps failing, and ends with an error saying why when none is left', async () => {
    const { run, events } = make({ operators: [new FailingOperator()], limits: { budget: 50 } });
    await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.reason).toBe('error');
    expect(finished?.type === 'run-finished' && finished.error?.kind).toBe('operator');
    expect(finished?.type === 'run-finished' && finished.error?.message).toContain('refused the connection');
  });

  it('interleaves operators: the tuner keeps working while another operator is dropped', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    const { run, events } = make({ evaluator, operators: [new FailingOperator(), new TuneOperator({ fileName: 'matmul.cpp' })], limits: { budget: 20 } });
    const summary = await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.reason).toBe('budget');
    expect(summary.best!.operator).toBe('tune');
    expect(summary.best!.speedup).toBeGreaterThan(2);
  });

  it('ends with an error naming the baseline when the kernel itself is wrong', async () => {
    const broken = MATMUL.replace('BLOCK_M = 64', 'BLOCK_M = 1024').replace('BLOCK_K = 16', 'BLOCK_K = 1024');
    const { run, events } = make({ baselineSource: broken, evaluator: new LandscapeEvaluator(matmulLandscape, broken) });
    await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.error?.kind).toBe('baseline');
    expect(finished?.type === 'run-finished' && finished.error?.message).toMatch(/baseline itself is runtime_error/);
    expect(run.candidates.length).toBe(1);
  });

  it('tries a candidate once more when its evaluation fails once (a harness hiccup), and goes on', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    let failed = 0;
    const flaky = {
      totalSlots: 1,
      evaluate: async (job: Parameters<typeof evaluator.evaluate>[0], o?: Parameters<typeof evaluator.evaluate>[1]) => {
        if (job.id === 'c0002' && failed++ === 0) throw new Error('The reference process exited during reference');
        return evaluator.evaluate(job, o);
      },
    };
    const { run, events } = make({ evaluator: flaky, limits: { budget: 5 } });
    await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.reason).toBe('budget');
    expect(run.candidates.every((c) => c.verdict)).toBe(true);
    expect(events.some((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('c0002'))).toBe(true);
  });

  it('ends with a host error (and leaves the candidate unjudged) when evaluation itself fails', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    const failing = {
      totalSlots: 1,
      evaluate: async (job: Parameters<typeof evaluator.evaluate>[0], o?: Parameters<typeof evaluator.evaluate>[1]) => {
        if (job.id !== 'c0000') throw new Error('The harness did not print a verdict');
        return evaluator.evaluate(job, o);
      },
    };
    const { run, events } = make({ evaluator: failing });
    await run.run();
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.error?.kind).toBe('host');
    expect(run.candidates[1].verdict).toBeUndefined();
    expect(run.candidates[1].state).toBe('queued');
  });

  it('stops on the AbortSignal: cancels what is in flight and reports stopped', async () => {
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL, 2, 40);
    const stop = new AbortController();
    const { run, events } = make({ evaluator, signal: stop.signal, limits: { budget: 100 } });
    run.on((e) => {
      if (e.type === 'candidate-evaluated' && e.candidate.id === 'c0003') stop.abort();
    });
    const started = Date.now();
    const summary = await run.run();
    expect(Date.now() - started).toBeLessThan(3000);
    const finished = events.find((e) => e.type === 'run-finished');
    expect(finished?.type === 'run-finished' && finished.reason).toBe('stopped');
    expect(summary.candidates).toBeLessThan(10);
    const unjudged = run.candidates.filter((c) => !c.verdict);
    expect(unjudged.every((c) => c.state === 'queued')).toBe(true);
  });
});
