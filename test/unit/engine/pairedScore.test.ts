import { describe, expect, it } from 'vitest';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import type { Operator, ProposalBatch, ProposalContext } from '../../../src/engine/operator';
import { formatSpeedup, outranks, pairedScore, scoreInterval, scoreOf } from '../../../src/engine/pairedScore';
import type { KernelSpec } from '../../../src/engine/spec';
import type { Verdict } from '../../../src/contract/verdict';
import { formatSpeedup as formatRowSpeedup } from '../../../src/runModel';
import { formatVerdict } from '../../../src/cli/verdictFormat';
import type { EvaluationJob } from '../../../src/contract/job';

const shapeA = { n: 128 };
const shapeB = { n: 1000 };

function verdict(baseline: [number, number], candidate: [number, number], interval?: [number, number]): Verdict {
  const shapes = [shapeA, shapeB].map((shape, i) => ({ shape, baseline_ms: baseline[i], candidate_ms: candidate[i], speedup: baseline[i] / candidate[i] }));
  const speedup = Math.sqrt(shapes[0].speedup * shapes[1].speedup);
  return { status: 'ok', reason: 'Correct.', speedup, shapes, ...(interval ? { speedup_interval: interval } : {}) };
}

describe('pairedScore', () => {
  it('is the harness\'s paired figure; once confirmed, the geometric mean of the evaluations after the pick', () => {
    expect(pairedScore({ verdict: verdict([9, 90], [0.5, 5]) })).toBeCloseTo(18, 6); // side by side, whatever the load
    const confirmed = { verdict: { status: 'ok' as const, reason: '', speedup: 2, speedup_interval: [1.9, 2.1] as [number, number] }, confirmations: [{ status: 'ok' as const, reason: '', speedup: 1.8, speedup_interval: [1.7, 1.9] as [number, number] }] };
    expect(pairedScore(confirmed)).toBe(1.8);
    expect(scoreInterval(confirmed)).toEqual([1.7, 1.9]);
    expect(pairedScore({ ...confirmed, confirmations: [{ status: 'incorrect', reason: 'wrong' }] })).toBe(0);
    // the first figure (the one it was picked for) no longer counts; two later ones combine as a geometric mean,
    // their interval never narrower than the two figures themselves
    const twice = { ...confirmed, confirmations: [...confirmed.confirmations, { status: 'ok' as const, reason: '', speedup: 2.0, speedup_interval: [1.98, 2.02] as [number, number] }] };
    expect(pairedScore(twice)).toBeCloseTo(Math.sqrt(1.8 * 2.0), 9);
    const [lo, hi] = scoreInterval(twice)!;
    expect(lo).toBeLessThanOrEqual(1.8);
    expect(hi).toBeGreaterThanOrEqual(2.0);
    expect(pairedScore({ verdict: { status: 'ok', reason: '', speedup: 9 }, confirmations: [{ status: 'ok', reason: '', speedup: 3 }] })).toBe(3);
    expect(pairedScore({ verdict: { status: 'incorrect', reason: 'wrong' } })).toBe(0);
  });

  it('scoreOf falls back to the harness figure, and is 0 unless correct', () => {
    expect(scoreOf({ verdict: { status: 'ok', reason: '', speedup: 3 } })).toBe(3);
    expect(scoreOf({ verdict: { status: 'ok', reason: '', speedup: 3 }, score: 2 })).toBe(2);
    expect(scoreOf({ verdict: { status: 'timeout', reason: '' }, score: 2 })).toBe(0);
  });

  it('ranks a candidate above another only when its interval clears the other\'s, or once it is confirmed', () => {
    const a = { verdict: { status: 'ok' as const, reason: '', speedup: 1.12, speedup_interval: [1.05, 1.2] as [number, number] } };
    const b = { verdict: { status: 'ok' as const, reason: '', speedup: 1.1, speedup_interval: [1.0, 1.2] as [number, number] } };
    const c = { verdict: { status: 'ok' as const, reason: '', speedup: 1.3, speedup_interval: [1.25, 1.35] as [number, number] } };
    expect(outranks(a, b)).toBe(false);
    expect(outranks(c, b)).toBe(true);
    expect(outranks(b, c)).toBe(false);
    expect(outranks({ ...a, confirmations: [{ status: 'ok', reason: '', speedup: 1.12 }] }, b)).toBe(true);
    expect(outranks(a, { verdict: { status: 'incorrect', reason: '' } })).toBe(true);
    expect(formatSpeedup(1.1, [1.08, 1.12])).toBe('1.10x (1.08-1.12)');
    expect(formatSpeedup(1.1, [1.1, 1.1])).toBe('1.10x');
    // an interval that rounds to the figure is a point: "2.50x", not "2.50x (2.50-2.50)", in the CLI and the panel
    expect(formatSpeedup(2.5, [2.4971, 2.5042])).toBe('2.50x');
    expect(formatRowSpeedup(2.5, [2.4971, 2.5042])).toBe('2.50x');
    expect(formatRowSpeedup(2.5, [2.49, 2.5042])).toBe('2.50x (2.49-2.50)');
    expect(formatVerdict({ status: 'ok', reason: 'Correct.', speedup: 2.5, speedup_interval: [2.4971, 2.5042],
      shapes: [{ shape: { n: 4 }, baseline_ms: 1, candidate_ms: 0.4, speedup: 2.5, interval: [2.4999, 2.5001] }] })).not.toMatch(/2\.50-2\.50/);
  });
});

/** Proposals whose verdicts the test scripts, in order. */
class ScriptedOperator implements Operator {
  readonly name = 'two';
  private n = 0;
  constructor(private readonly count: number) {}
  async propose(ctx: ProposalContext): Promise<ProposalBatch> {
    this.n++;
    if (this.n > this.count) return { proposals: [], exhausted: true };
    return { proposals: [{ source: `${ctx.baselineSource}// variant ${this.n}\nint v${this.n};\n`, parents: ['c0000'], operator: this.name }] };
  }
}

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/k.cpp', kernel: 'k' };

describe('EvolutionRun ranks by paired ratios', () => {
  it('never divides times from different evaluations', async () => {
    const timings: Record<string, Verdict> = {
      c0000: verdict([1, 10], [1, 10]),
      c0001: verdict([2, 20], [0.5, 5]), // 4x side by side, measured while the machine was busy
      c0002: verdict([1, 10], [0.4, 4]), // 2.5x side by side on a quiet machine: faster in absolute times only
    };
    const evaluator = { totalSlots: 1, evaluate: async (job: EvaluationJob) => ({ ...timings[job.id.replace(/-confirm\d+$/, '')], host: 'scripted' }) };
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/r', spec, baselineSource: 'int k;\n', operators: [new ScriptedOperator(2)], evaluator, limits: { budget: 5 } });
    const summary = await run.run();
    expect(summary.best!.id).toBe('c0001');
    expect(summary.best!.speedup).toBeCloseTo(4, 6);
    expect(run.candidates[2].score).toBeCloseTo(2.5, 6);
  });

  it('does not crown an unconfirmed candidate whose interval overlaps the best\'s', async () => {
    const timings: Record<string, Verdict> = {
      c0000: { ...verdict([1, 1], [1, 1], [0.98, 1.02]) },
      c0001: { ...verdict([1.1, 1.1], [1, 1], [1.05, 1.15]) },
      c0002: { ...verdict([1.12, 1.12], [1, 1], [1.06, 1.18]) },
    };
    const evaluator = { totalSlots: 1, evaluate: async (job: EvaluationJob) => ({ ...timings[job.id], host: 'scripted' }) };
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/r', spec, baselineSource: 'int k;\n', operators: [new ScriptedOperator(2)], evaluator, limits: { budget: 5 }, confirmTop: 0 });
    const improved: string[] = [];
    run.on((e) => { if (e.type === 'best-improved') improved.push(e.id); });
    const summary = await run.run();
    expect(improved).toEqual(['c0001']);
    expect(summary.best!.id).toBe('c0001');
    expect(summary.best!.interval![0]).toBeCloseTo(1.05, 9);
  });
});
