import { describe, expect, it } from 'vitest';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import type { Operator, ProposalBatch, ProposalContext } from '../../../src/engine/operator';
import { RunReference, scoreOf } from '../../../src/engine/runReference';
import type { KernelSpec } from '../../../src/engine/spec';
import type { Verdict } from '../../../src/contract/verdict';
import type { EvaluationJob } from '../../../src/contract/job';

const shapeA = { n: 128 };
const shapeB = { n: 1000 };

function verdict(baseline: [number, number], candidate: [number, number]): Verdict {
  const shapes = [shapeA, shapeB].map((shape, i) => ({ shape, baseline_ms: baseline[i], candidate_ms: candidate[i], speedup: baseline[i] / candidate[i] }));
  const speedup = Math.sqrt(shapes[0].speedup * shapes[1].speedup);
  return { status: 'ok', reason: 'Correct.', speedup, shapes };
}

describe('RunReference', () => {
  it('scores against the median of every baseline timing of the run', () => {
    const ref = new RunReference();
    ref.add(verdict([1, 10], [1, 10]));
    ref.add(verdict([1.1, 11], [0.5, 5]));
    ref.add(verdict([9, 90], [0.5, 5])); // a baseline measured while the machine was busy
    expect(ref.samples).toBe(3);
    // medians 1.1 and 11: a candidate at 0.5 / 5 ms is 2.2x, whichever evaluation measured it
    expect(ref.speedup(verdict([9, 90], [0.5, 5]))).toBeCloseTo(2.2, 6);
    expect(ref.speedup(verdict([1, 10], [0.5, 5]))).toBeCloseTo(2.2, 6);
    expect(ref.speedup({ status: 'incorrect', reason: 'wrong' })).toBe(0);
    expect(ref.speedup({ status: 'ok', reason: 'no timings', speedup: 1.7 })).toBe(1.7);
  });

  it('scoreOf falls back to the harness figure, and is 0 unless correct', () => {
    expect(scoreOf({ verdict: { status: 'ok', reason: '', speedup: 3 } })).toBe(3);
    expect(scoreOf({ verdict: { status: 'ok', reason: '', speedup: 3 }, score: 2 })).toBe(2);
    expect(scoreOf({ verdict: { status: 'timeout', reason: '' }, score: 2 })).toBe(0);
  });
});

/** Two proposals: a truly faster one, and a slower one whose evaluation catches a badly slow baseline timing. */
class TwoOperator implements Operator {
  readonly name = 'two';
  private n = 0;
  async propose(ctx: ProposalContext): Promise<ProposalBatch> {
    this.n++;
    if (this.n > 2) return { proposals: [], exhausted: true };
    return { proposals: [{ source: `${ctx.baselineSource}// variant ${this.n}\nint v${this.n};\n`, parents: ['c0000'], operator: this.name }] };
  }
}

describe('EvolutionRun ranks by the run reference', () => {
  it('does not crown a candidate for a slow baseline measurement', async () => {
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/k.cpp', kernel: 'k' };
    const timings: Record<string, Verdict> = {
      c0000: verdict([1, 10], [1, 10]),
      c0001: verdict([1, 10], [0.25, 2.5]), // 4x, honestly measured
      c0002: verdict([20, 200], [0.5, 5]), // 2x, but its baseline timing was 20x off: the harness says 40x
    };
    const evaluator = { totalSlots: 1, evaluate: async (job: EvaluationJob) => ({ ...timings[job.id.replace(/-confirm\d+$/, '')], host: 'scripted' }) };
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/r', spec, baselineSource: 'int k;\n', operators: [new TwoOperator()], evaluator, limits: { budget: 5 } });
    const summary = await run.run();
    expect(run.candidates[2].verdict!.speedup).toBeCloseTo(40, 6);
    expect(summary.best!.id).toBe('c0001');
    // medians of the three baseline timings: 1 and 10
    expect(summary.best!.speedup).toBeCloseTo(4, 6);
    expect(run.candidates[2].score).toBeCloseTo(2, 6);
  });
});
