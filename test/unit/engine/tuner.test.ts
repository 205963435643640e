import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../../src/engine/candidate';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import { detectKnobs, knobValues } from '../../../src/engine/knobs';
import { GreedyPolicy } from '../../../src/engine/selection';
import { sourceHash } from '../../../src/engine/sourceText';
import type { KernelSpec } from '../../../src/engine/spec';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { fitness } from '../../../src/engine/fitness';
import { gridBest, LandscapeEvaluator, MATMUL, matmulLandscape } from './landscape';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };

async function tune(budget: number, source = MATMUL) {
  const evaluator = new LandscapeEvaluator(matmulLandscape, source);
  const run = new EvolutionRun({ runId: 't', runDir: '/tmp/none', spec, baselineSource: source, operators: [new TuneOperator({ fileName: 'matmul.cpp' })],
    evaluator, policy: new GreedyPolicy(), limits: { budget } });
  const duplicates: string[] = [];
  run.on((e) => {
    if (e.type === 'proposal-invalid') duplicates.push(e.invalid.reason);
  });
  const summary = await run.run();
  return { summary, run, evaluator, duplicates };
}

describe('TuneOperator searching block sizes', () => {
  it('reaches at least 90% of the exhaustive grid best with a budget of 40 (the grid has 1331 points)', async () => {
    const grid = gridBest(matmulLandscape, MATMUL);
    const { summary, evaluator } = await tune(40);
    // 40 candidates and the baseline; the leaders judged again at the end are not candidates
    expect(evaluator.jobs.filter((j) => !j.includes('-confirm')).length).toBeLessThanOrEqual(41);
    expect(summary.best!.speedup / grid).toBeGreaterThanOrEqual(0.9);
  });

  for (const [m, n, k] of [[1, 1, 1], [256, 1024, 256], [1, 1024, 2], [512, 2, 1]]) {
    it(`reaches 85% of the grid best within 40 proposals from BLOCK_M=${m}, BLOCK_N=${n}, BLOCK_K=${k}`, async () => {
      const src = MATMUL.replace('BLOCK_M = 64', `BLOCK_M = ${m}`).replace('BLOCK_N = 16', `BLOCK_N = ${n}`).replace('BLOCK_K = 16', `BLOCK_K = ${k}`);
      const grid = gridBest(matmulLandscape, src);
      const { summary } = await tune(40, src);
      expect(summary.best!.speedup / grid).toBeGreaterThanOrEqual(0.85);
    });
  }

  it('never proposes a source the run has already seen, and gives up on a knob that only breaks the kernel', async () => {
    const { run, duplicates } = await tune(40);
    expect(duplicates).toEqual([]);
    const hashes = run.candidates.map((c) => sourceHash(c.source, 'clike'));
    expect(new Set(hashes).size).toBe(hashes.length);
    const fixedChanges = run.candidates.filter((c) => c.knobs && c.knobs.N_FIXED !== 1024);
    expect(fixedChanges.length).toBeLessThanOrEqual(3);
  });

  it('drafts spread-out probes first, then refines the best with halving/doubling moves', async () => {
    const { run } = await tune(12);
    const drafts = run.candidates.filter((c) => c.mode === 'draft');
    expect(drafts.length).toBe(3);
    expect(drafts.every((d) => d.parents[0] === 'c0000')).toBe(true);
    const refine = run.candidates.filter((c) => c.mode === 'tune');
    expect(refine.length).toBeGreaterThan(0);
    // every refinement changes knobs by one power of two per knob (or repeats the move that made its parent)
    const byId = new Map(run.candidates.map((c) => [c.id, c]));
    for (const c of refine.slice(0, 4)) {
      const p = knobValues(detectKnobs(byId.get(c.parents[0])!.source, 'clike'));
      const changed = Object.keys(p).filter((k) => p[k] !== (c.knobs as Record<string, number>)[k]);
      expect(changed.length).toBeGreaterThanOrEqual(1);
      expect(changed.length).toBeLessThanOrEqual(2);
    }
  });

  it('is stateless: asked again with the same run it proposes the same next step, so a resumed run continues', async () => {
    const { run } = await tune(10);
    const op = new TuneOperator({ fileName: 'matmul.cpp' });
    const best = [...run.candidates].sort((a, b) => fitness(b.verdict) - fitness(a.verdict))[0] as Candidate;
    const ctx = { spec, baselineSource: MATMUL, candidates: run.candidates, parent: best, seen: new Set(run.candidates.map((c) => c.hash)) };
    const a = await op.propose(ctx);
    const b = await new TuneOperator({ fileName: 'matmul.cpp' }).propose(ctx);
    expect(a.proposals[0].source).toBe(b.proposals[0].source);
    expect(ctx.seen.has(sourceHash(a.proposals[0].source, 'clike'))).toBe(false);
  });

  it('says it is exhausted when a kernel has no knobs', async () => {
    const op = new TuneOperator({ fileName: 'k.cpp' });
    const src = 'void k(float* x) { x[0] = 1; }\n';
    const base: Candidate = { id: 'c0000', parents: [], operator: 'baseline', source: src, hash: sourceHash(src, 'clike'), state: 'done', timings: { proposedAt: 0 } };
    const batch = await op.propose({ spec, baselineSource: src, candidates: [base], seen: new Set([base.hash]) });
    expect(batch).toEqual({ proposals: [], exhausted: true });
  });
});

describe('TuneOperator seed', () => {
  it('reproduces a run with the same seed and explores differently with another', async () => {
    const spec2: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };
    const runWith = async (seed: number) => {
      const run = new EvolutionRun({ runId: 's', runDir: '/tmp/none', spec: spec2, baselineSource: MATMUL, operators: [new TuneOperator({ fileName: 'matmul.cpp', seed })],
        evaluator: new LandscapeEvaluator(matmulLandscape, MATMUL), limits: { budget: 12 } });
      await run.run();
      return run.candidates.map((c) => JSON.stringify(c.knobs ?? {}));
    };
    const a = await runWith(1);
    expect(await runWith(1)).toEqual(a);
    expect(await runWith(2)).not.toEqual(a);
  });
});
