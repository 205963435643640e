import { describe, expect, it } from 'vitest';
import type { EngineEvent, TerminationReason } from '../../../src/engine/events';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import type { KernelSpec } from '../../../src/engine/spec';
import { estimateRemainingS, terminationReason, type TerminationLimits } from '../../../src/engine/termination';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { LandscapeEvaluator, MATMUL, matmulLandscape } from './landscape';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };
const state = { used: 0, elapsedS: 0, evaluationsSinceImprovement: 0, bestSpeedup: 1, stopped: false };

async function endOf(limits: TerminationLimits, delayMs = 0): Promise<{ reason: TerminationReason; judged: number; best: number }> {
  const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/r', spec, baselineSource: MATMUL, operators: [new TuneOperator({ fileName: 'matmul.cpp' })],
    evaluator: new LandscapeEvaluator(matmulLandscape, MATMUL, 1, delayMs), limits });
  let reason: TerminationReason = 'error';
  run.on((e: EngineEvent) => {
    if (e.type === 'run-finished') reason = e.reason;
  });
  const s = await run.run();
  return { reason, judged: run.candidates.filter((c) => c.verdict).length, best: s.best!.speedup };
}

describe('termination', () => {
  it('names the first limit reached; a user stop wins over everything', () => {
    expect(terminationReason({ budget: 5 }, { ...state, used: 5 })).toBe('budget');
    expect(terminationReason({ budget: 5 }, { ...state, used: 4 })).toBeUndefined();
    expect(terminationReason({ timeS: 60 }, { ...state, elapsedS: 61 })).toBe('time');
    expect(terminationReason({ plateau: 3 }, { ...state, evaluationsSinceImprovement: 3 })).toBe('plateau');
    expect(terminationReason({ target: 2 }, { ...state, bestSpeedup: 2.5 })).toBe('target');
    expect(terminationReason({ budget: 1, target: 2 }, { ...state, used: 9, bestSpeedup: 3, stopped: true })).toBe('stopped');
  });

  it('estimates time left from the rate so far, capped by the time limit', () => {
    expect(estimateRemainingS({ budget: 10 }, { ...state, used: 5, elapsedS: 50 }, 5)).toBeCloseTo(50);
    expect(estimateRemainingS({ budget: 10, timeS: 60 }, { ...state, used: 5, elapsedS: 50 }, 5)).toBeCloseTo(10);
    expect(estimateRemainingS({}, state, 0)).toBeUndefined();
  });

  it('a run stops at the target speedup', async () => {
    const r = await endOf({ budget: 100, target: 5 });
    expect(r.reason).toBe('target');
    expect(r.best).toBeGreaterThanOrEqual(5);
    expect(r.judged).toBeLessThan(100);
  });

  it('a run stops on a plateau', async () => {
    const r = await endOf({ budget: 500, plateau: 4 });
    expect(r.reason).toBe('plateau');
    expect(r.judged).toBeLessThan(500);
  });

  it('a run stops at its wall-time limit, even while an evaluation is running', async () => {
    const started = Date.now();
    const r = await endOf({ budget: 1000, timeS: 0.5 }, 100);
    expect(r.reason).toBe('time');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a run ends when the tuner has nothing new to try', async () => {
    const src = '#define UNROLL 4\nvoid k(float* x) { for (int i = 0; i < UNROLL; ++i) x[i] = 0; }\n';
    const f = (v: Record<string, number>) => 1 + Math.log2(v.UNROLL);
    const evaluator = new LandscapeEvaluator(f, src);
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/r', spec, baselineSource: src, operators: [new TuneOperator({ fileName: 'k.cpp' })], evaluator, limits: {} });
    let reason: TerminationReason = 'error';
    run.on((e) => {
      if (e.type === 'run-finished') reason = e.reason;
    });
    await run.run();
    expect(reason).toBe('exhausted');
    // UNROLL may be 1, 2, 4, ..., 64: seven programs, each judged once (the leaders' confirmations aside)
    expect(evaluator.jobs.filter((j) => !j.includes('-confirm')).length).toBe(7);
  });
});
