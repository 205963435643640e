// The tuner on Triton sources, against scripted landscapes: joint moves and hardware-informed starts on a
// matmul launched with small tiles, and the constraints it learns from failures (no failed region twice).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import { detectKnobs, type Knob, knobValues, type KnobValues } from '../../../src/engine/knobs';
import { GreedyPolicy } from '../../../src/engine/selection';
import type { KernelSpec } from '../../../src/engine/spec';
import { bracketing, FAR_BELOW, TuneOperator } from '../../../src/engine/tuneOperator';
import { scoreOf } from '../../../src/engine/pairedScore';
import { deviceRegions } from '../../../src/engine/tuneConstraints';
import { validateConfig } from '../../../src/remote/hostConfig';
import { createOperators } from '../../../src/run/operatorRegistry';
import type { Verdict } from '../../../src/contract/verdict';
import { PythonLaunches } from './pythonLaunches';
import { gridBest, LECTURE_GELU, matmulTime, ROW_MAX, outOfRegisters, outOfResources, sharedBytes, SHARED_LIMIT, TILED_BRANCH, TILED_BRANCH_ONE_STATEMENT, TRITON_MATMUL, TritonLandscapeEvaluator, type LandscapeShape } from './tritonLandscape';

const matmulSpec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/matmul.py', kernel: 'matmul_kernel' };
const matmulShapes: LandscapeShape[] = [{ shape: { m: 2048, n: 2048, k: 2048 }, time: matmulTime }];
// the grid of the issue: tiles 64..256, 4 or 8 warps, 3 or 4 stages
const GRID = { BLOCK_M: [64, 128, 256], BLOCK_N: [64, 128, 256], BLOCK_K: [64, 128, 256], num_warps: [4, 8], num_stages: [3, 4] };

async function tuneMatmul(budget: number, opts: { hardware?: string; knowledge?: boolean } = {}) {
  const evaluator = new TritonLandscapeEvaluator(TRITON_MATMUL, matmulShapes, outOfResources, opts.hardware);
  const op = new TuneOperator({ fileName: 'matmul.py', knowledgeDir: opts.knowledge === false ? null : undefined });
  const run = new EvolutionRun({ runId: 't', runDir: '/tmp/none', spec: matmulSpec, baselineSource: TRITON_MATMUL, operators: [op],
    evaluator, policy: new GreedyPolicy(), limits: { budget }, confirmTop: 0 });
  const summary = await run.run();
  return { summary, run, evaluator };
}

describe('an elementwise kernel on an H200 (the quick GELU launched with 128-element blocks and 1 warp)', () => {
  const gelu = readFileSync(path.join(__dirname, '../../../scripts/gpu/tuner-kernels/quick_gelu/gelu.py'), 'utf8');
  const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/gelu.py', kernel: 'quick_gelu_kernel' };
  // a scripted memory-bound landscape whose optimum is off every start: 2048-element blocks want 16 warps there
  const time = (v: KnobValues) => Math.exp(0.3 * (Math.log2(v.BLOCK) - 11) ** 2 + 0.5 * (Math.log2(v.num_warps) - 4) ** 2);
  const grid = gridBest({ BLOCK: [256, 512, 1024, 2048, 4096, 8192], num_warps: [1, 2, 4, 8, 16] }, time, { BLOCK: 128, num_warps: 1 }, () => undefined);

  it('drafts the Hopper elementwise starts, then moves the warps alone at the best block, reaching the grid best within 20% of it', async () => {
    const budget = Math.floor(0.2 * grid.points);
    const evaluator = new TritonLandscapeEvaluator(gelu, [{ shape: { n: 16777216 }, time }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 'g', runDir: '/tmp/none', spec, baselineSource: gelu, operators: [new TuneOperator({ fileName: 'gelu.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget }, confirmTop: 0 });
    const summary = await run.run();
    expect(evaluator.jobs.slice(1, 4).map((j) => j.values)).toEqual([{ BLOCK: 1024, num_warps: 8 }, { BLOCK: 2048, num_warps: 8 }, { BLOCK: 1024, num_warps: 4 }]);
    expect(evaluator.jobs[4].values).toEqual({ BLOCK: 2048, num_warps: 16 });
    expect(evaluator.jobs.length - 1).toBeLessThanOrEqual(budget);
    expect(summary.best!.speedup / grid.best).toBeGreaterThanOrEqual(0.98);
  });

  it('without the starts, its drafts grow the warps with the block, so each thread keeps the 4 elements the original gave it', async () => {
    // a memory-bound landscape: what counts is the elements each thread handles (best at 4: loads in flight
    // without a loop), then mildly the block (fewer programs); the original launch (128, 1 warp) is at 4 already
    const perThread = (v: KnobValues) => Math.exp(0.4 * (Math.log2(v.BLOCK / (32 * v.num_warps)) - 2) ** 2 + 0.05 * (Math.log2(v.BLOCK) - 10) ** 2);
    const perThreadGrid = gridBest({ BLOCK: [256, 512, 1024, 2048, 4096, 8192], num_warps: [1, 2, 4, 8] }, perThread, { BLOCK: 128, num_warps: 1 }, () => undefined);
    const budget = Math.floor(0.2 * perThreadGrid.points);
    const evaluator = new TritonLandscapeEvaluator(gelu, [{ shape: { n: 16777216 }, time: perThread }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 'p', runDir: '/tmp/none', spec, baselineSource: gelu, operators: [new TuneOperator({ fileName: 'gelu.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget }, confirmTop: 0 });
    const summary = await run.run();
    const drafts = run.candidates.filter((c) => c.mode === 'draft').map((c) => evaluator.jobs.find((j) => j.id === c.id)!.values);
    expect(drafts.length).toBeGreaterThan(0);
    for (const v of drafts) expect(v.BLOCK / v.num_warps).toBe(128);
    expect(evaluator.jobs.length - 1).toBeLessThanOrEqual(budget);
    expect(summary.best!.speedup / perThreadGrid.best).toBeGreaterThanOrEqual(0.98);
  });
});

describe('joint moves and hardware-informed starts (Triton matmul from 16x16x16 tiles, 1 warp, 1 stage)', () => {
  const base = knobValues(detectKnobs(TRITON_MATMUL, 'python'));
  const grid = gridBest(GRID, matmulTime, base, outOfResources);

  it('on an H200 reaches 98% of the exhaustive grid best in at most 20% of its evaluations', async () => {
    expect(grid.points).toBe(108);
    const budget = Math.floor(0.2 * grid.points);
    const { summary, evaluator } = await tuneMatmul(budget, { hardware: 'nvidia-h200' });
    expect(evaluator.jobs.length - 1).toBeLessThanOrEqual(budget);
    expect(summary.best!.speedup / grid.best).toBeGreaterThanOrEqual(0.98);
    // the first drafts are the Hopper matmul configurations of the knowledge base
    expect(evaluator.jobs[1].values).toMatchObject({ BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, num_warps: 8, num_stages: 3 });
  });

  it('without a knowledge base, joint moves still get there (where one knob at a time stalls)', async () => {
    const { summary } = await tuneMatmul(40, { knowledge: false });
    expect(summary.best!.speedup / grid.best).toBeGreaterThanOrEqual(0.9);
  });

  it('without a knowledge base, its drafts give each warp about 2048 output elements and three stages, whatever the original launch gave', async () => {
    // the H200 grid of part i25 (36 points, 20% of them: 7 evaluations); the original launch is one warp on 16x16
    const i25 = { BLOCK_M: [64, 128, 256], BLOCK_N: [64, 128, 256], BLOCK_K: [64], num_warps: [4, 8], num_stages: [3, 4] };
    const small = gridBest(i25, matmulTime, base, outOfResources);
    const budget = Math.floor(0.2 * small.points);
    const { summary, run, evaluator } = await tuneMatmul(budget, { knowledge: false });
    const drafts = run.candidates.filter((c) => c.mode === 'draft').map((c) => evaluator.jobs.find((j) => j.id === c.id)!.values);
    expect(drafts.length).toBeGreaterThan(0);
    for (const v of drafts) {
      expect(v.num_warps).toBe(Math.min(16, Math.max(1, (v.BLOCK_M * v.BLOCK_N) / 2048)));
      expect(v.num_stages).toBe(3); // the original's one stage leaves the loop over K without a pipeline
      // the K tile follows the output tile up to the middle of its domain (16-256) and no further
      expect(v.BLOCK_K).toBe(Math.min(64, v.BLOCK_M));
    }
    expect(drafts.some((v) => v.BLOCK_M > 64)).toBe(true);
    expect(evaluator.jobs.length - 1).toBeLessThanOrEqual(budget);
    // 92% of this landscape's grid best; before the K tile was held at 64, the best draft was 128 x 128 x 128 on 8
    // warps, 68% (the GPU read 82% on the same grid). The rule was written after that grid: this checks the rule, not
    // its generality (a held-out matmul's grid does)
    expect(summary.best!.speedup / small.best).toBeGreaterThanOrEqual(0.9);
  });

  it('on an NVIDIA GPU proposes no tile whose accumulator the registers cannot hold, before any verdict says so', async () => {
    // ptxas refuses such tiles on the H200 (the landscape does as it did), so each one proposed costs an evaluation
    for (const knowledge of [false, true]) {
      const { evaluator } = await tuneMatmul(40, { hardware: 'nvidia-h200', knowledge });
      expect(evaluator.jobs.length).toBeGreaterThan(10);
      expect(evaluator.jobs.filter((j) => outOfRegisters(j.values)).map((j) => j.values)).toEqual([]);
    }
    // proposed, two 256 x 256 tiles were refused and what they taught left no move: the search stopped at 68% of
    // the i25 grid's best after 7 evaluations, whatever its budget
    const i25 = { BLOCK_M: [64, 128, 256], BLOCK_N: [64, 128, 256], BLOCK_K: [64], num_warps: [4, 8], num_stages: [3, 4] };
    const { summary } = await tuneMatmul(10, { hardware: 'nvidia-h200', knowledge: false });
    expect(summary.best!.speedup / gridBest(i25, matmulTime, base, outOfResources).best).toBeGreaterThanOrEqual(0.9);
    // a C++ kernel's BLOCK_M x BLOCK_N is a cache tile, and another vendor's GPU has other register files
    const knobs = detectKnobs(TRITON_MATMUL, 'python').knobs;
    expect(deviceRegions(knobs, 'triton', 'nvidia-h200')).toHaveLength(1);
    expect(deviceRegions(knobs, 'cpp')).toEqual([]);
    expect(deviceRegions(knobs, 'triton', 'amd-mi300x')).toEqual([]);
  });

  it('tries no configuration again that needs at least the shared memory of one that ran out', async () => {
    const { evaluator } = await tuneMatmul(40, { hardware: 'nvidia-h200' });
    const failures = evaluator.jobs.filter((j) => j.status !== 'ok');
    for (const [i, j] of evaluator.jobs.entries()) {
      const earlier = evaluator.jobs.slice(0, i).filter((x) => x.status !== 'ok');
      // a later proposal never needs as much shared memory (per the tuner's footprint: stages x K x (M + N)) as an earlier failure
      for (const f of earlier) expect(sharedBytes(j.values) < sharedBytes(f.values)).toBe(true);
    }
    expect(failures.every((f) => sharedBytes(f.values) > SHARED_LIMIT)).toBe(true);
  });
});

/** A row kernel launched with a literal block that must cover the row: too small a block drops columns. */
const ROW_KERNEL = `import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)


def row_scale(x, y):
    n_rows, n_cols = x.shape
    row_scale_kernel[(n_rows,)](x, y, n_cols, BLOCK_SIZE=16384, num_warps=4)
    return y
`;

describe('constraints learned from wrong results', () => {
  it('after a block too small for a named shape, never proposes a block below that shape\'s next power of two', async () => {
    const shapes = [{ rows: 1024, cols: 3000 }, { rows: 512, cols: 5000 }];
    const wrong = (v: KnobValues): Verdict | undefined => {
      const bad = shapes.find((s) => v.BLOCK_SIZE < s.cols);
      return bad ? { status: 'incorrect', reason: `Wrong result on shape {rows=${bad.rows}, cols=${bad.cols}}, seed 1: 2048 of ${bad.cols} columns differ.` } : undefined;
    };
    // smaller blocks are faster here (fewer masked lanes), so a search without constraints keeps shrinking it
    const time = (v: KnobValues) => v.BLOCK_SIZE * Math.exp(0.3 * (Math.log2(v.num_warps) - 3) ** 2);
    const evaluator = new TritonLandscapeEvaluator(ROW_KERNEL, shapes.map((s) => ({ shape: s, time })), wrong, 'nvidia-h200');
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/rows.py', kernel: 'row_scale_kernel' };
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/none', spec, baselineSource: ROW_KERNEL, operators: [new TuneOperator({ fileName: 'rows.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 24 }, confirmTop: 0 });
    const summary = await run.run();
    const wrongs = evaluator.jobs.filter((j) => j.status === 'incorrect');
    expect(wrongs.length).toBeGreaterThanOrEqual(1);
    // each wrong result raised the bound: no two wrong candidates failed the same way
    const first = evaluator.jobs.findIndex((j) => j.status === 'incorrect');
    const bound = (b: number) => 2 ** Math.ceil(Math.log2(Math.min(...shapes.map((s) => s.cols).filter((c) => c > b))));
    for (const j of evaluator.jobs.slice(first + 1)) expect(j.values.BLOCK_SIZE).toBeGreaterThanOrEqual(bound(evaluator.jobs[first].values.BLOCK_SIZE));
    expect(wrongs.length).toBeLessThanOrEqual(2);
    // and the search still found the best correct point: the smallest covering block, 8 warps
    expect(evaluator.jobs.find((j) => j.id === summary.best!.id)?.values).toMatchObject({ BLOCK_SIZE: 8192, num_warps: 8 });
  });
});

/**
 * Judges by what the launcher really launches: each shape's call runs in Python (pythonLaunches.ts) and the
 * recorded meta-parameters are timed by a scripted landscape, so a per-shape dispatch is judged as written.
 */
class LaunchEvaluator {
  readonly totalSlots = 1;
  readonly jobs: Array<{ id: string; meta: Array<Record<string, unknown>> }> = [];
  constructor(
    private readonly python: PythonLaunches,
    private readonly baseline: string,
    private readonly shapes: Array<Record<string, number>>,
    private readonly call: (shape: Record<string, number>) => string,
    private readonly time: (shape: Record<string, number>, meta: Record<string, unknown>) => number,
    readonly hardware = 'nvidia-h200',
  ) {}

  private timesOf(source: string): { meta: Array<Record<string, unknown>>; ms: number[] } {
    const meta = this.python.run(source, this.shapes.map((s) => this.call(s)).join('\n'));
    return { meta, ms: this.shapes.map((s, i) => this.time(s, meta[i])) };
  }

  async evaluate(job: { id: string; candidateSource: string }) {
    const base = this.timesOf(this.baseline);
    const cand = this.timesOf(job.candidateSource);
    this.jobs.push({ id: job.id, meta: cand.meta });
    const shapes = this.shapes.map((shape, i) => ({ shape, baseline_ms: base.ms[i], candidate_ms: cand.ms[i], speedup: base.ms[i] / cand.ms[i] }));
    const speedup = Math.exp(shapes.reduce((a, s) => a + Math.log(s.speedup), 0) / shapes.length);
    return { status: 'ok' as const, reason: 'Correct.', speedup, shapes, host: 'landscape' };
  }
}

describe('shape-aware dispatch', () => {
  const python = new PythonLaunches();
  afterAll(() => python.dispose());
  const src = readFileSync(path.join(__dirname, 'fixtures', 'triton_computed_launch.py'), 'utf8');
  const shapes = [{ rows: 4096, cols: 1024 }, { rows: 2048, cols: 8192 }];
  // each shape has its own best warp count: 2 for the short rows, 16 for the long ones (what the code computes there)
  const bestWarps = (s: Record<string, number>) => (s.cols <= 1024 ? 2 : 16);
  const time = (s: Record<string, number>, meta: Record<string, unknown>) =>
    (s.rows * s.cols) / 1e6 * Math.exp(0.4 * (Math.log2(meta.num_warps as number) - Math.log2(bestWarps(s))) ** 2);
  const call = (s: Record<string, number>) => `candidate.scale_rows(Tensor((${s.rows}, ${s.cols})), Tensor((${s.cols},)), 1e-6)`;

  it('when shapes want different settings, proposes one launcher that picks per shape, and it wins as judged', { timeout: 120_000 }, async () => {
    const evaluator = new LaunchEvaluator(python, src, shapes, call, time);
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/k.py', kernel: '_scale_rows_kernel' };
    const run = new EvolutionRun({ runId: 'd', runDir: '/tmp/none', spec, baselineSource: src, operators: [new TuneOperator({ fileName: 'k.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 12 }, confirmTop: 0 });
    const summary = await run.run();
    const dispatch = run.candidates.find((c) => c.mode === 'dispatch');
    expect(dispatch).toBeDefined();
    // the table names each shape's winner, and the launch really used it: 2 warps on short rows, the original 16 on long ones
    expect(dispatch!.knobs).toMatchObject({ '{rows=4096, cols=1024}': expect.stringMatching(/^num_warps=2 \(c\d{4}, 1\.49x\)$/) });
    expect(dispatch!.knobs!['{rows=2048, cols=8192}']).toMatch(/^as the original computes \(c0000, 1\.00x\)$|^num_warps=16 \(c\d{4}, 1\.00x\)$/);
    expect(evaluator.jobs.find((j) => j.id === dispatch!.id)!.meta.map((m) => m.num_warps)).toEqual([2, 16]);
    expect(summary.best!.id).toBe(dispatch!.id);
    expect(summary.best!.speedup).toBeCloseTo(Math.sqrt(Math.exp(0.4)), 3);
    // every single setting is worse than the dispatch on one of the shapes
    const singles = run.candidates.filter((c) => c.mode !== 'dispatch' && c.verdict?.status === 'ok');
    expect(Math.max(...singles.map((c) => c.verdict!.speedup!))).toBeLessThan(summary.best!.speedup);
  });

  it('proposes no dispatch when one setting wins every shape, and gives the unit it kept for one to the search', { timeout: 120_000 }, async () => {
    // (gently: 2 and 32 warps within 20% of 8, so no slope falls far enough below the best to rule them out, trend.ts)
    const sameBest = (s: Record<string, number>, meta: Record<string, unknown>) => (s.rows * s.cols) / 1e6 * Math.exp(0.05 * (Math.log2(meta.num_warps as number) - 3) ** 2);
    const evaluator = new LaunchEvaluator(python, src, shapes, call, sameBest);
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/k.py', kernel: '_scale_rows_kernel' };
    const run = new EvolutionRun({ runId: 'e', runDir: '/tmp/none', spec, baselineSource: src, operators: [new TuneOperator({ fileName: 'k.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 5 }, confirmTop: 0 });
    const summary = await run.run();
    expect(run.candidates.some((c) => c.mode === 'dispatch')).toBe(false);
    expect(evaluator.jobs.find((j) => j.id === summary.best!.id)!.meta.map((m) => m.num_warps)).toEqual([8, 8]);
    // the whole budget is spent (five of the kernel's six warp counts): the unit kept for a closing table (two
    // shapes) went to one more setting
    expect(run.candidates.filter((c) => c.state !== 'cancelled').length - 1).toBe(5);
  });
});

describe('a launcher with a branch for another device (Liger\'s SwiGLU: a tiled launch on Blackwell, the row launch elsewhere)', () => {
  const python = new PythonLaunches();
  afterAll(() => python.dispose());
  const src = TILED_BRANCH;
  // SwiGLU's published shapes (bf16 MLP rows); on this Hopper every one runs the row kernel
  const shapes = [{ rows: 2048, cols: 14336 }, { rows: 4096, cols: 18944 }, { rows: 777, cols: 11008 }, { rows: 8192, cols: 2816 }];
  const bestWarps = (s: Record<string, number>) => (s.cols >= 8192 ? 16 : 8);
  const time = (s: Record<string, number>, meta: Record<string, unknown>) =>
    (s.rows * s.cols) / 1e6 * Math.exp(0.3 * (Math.log2(meta.num_warps as number) - Math.log2(bestWarps(s))) ** 2);
  const call = (s: Record<string, number>) => `candidate.gated(Tensor((${s.rows}, ${s.cols})), Tensor((${s.rows}, ${s.cols})))`;

  it('judges each launch of the row kernel once: the tiled launch, which never runs here, is never written', { timeout: 120_000 }, async () => {
    const evaluator = new LaunchEvaluator(python, src, shapes, call, time);
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/k.py', kernel: '_gated_kernel' };
    const run = new EvolutionRun({ runId: 'w', runDir: '/tmp/none', spec, baselineSource: src, operators: [new TuneOperator({ fileName: 'k.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 20 }, confirmTop: 0 });
    const summary = await run.run();
    const tiledLaunch = src.slice(src.indexOf('    if use_tiles'), src.indexOf('        return c'));
    const judged = run.candidates.filter((c) => c.operator !== 'baseline' && c.verdict);
    for (const c of judged) expect(c.source).toContain(tiledLaunch);
    // before, the first drafts wrote both launches' warps, and their children moved the row launch's alone: three
    // children of three drafts launched the row kernel with 16 warps on every shape, each judged (as on an H100)
    // (a table may launch what a setting did: its rows name candidates, and "as the original computes" on a shape
    // is a number only the launcher knows)
    const settings = evaluator.jobs.filter((j) => run.candidates.find((c) => c.id === j.id)?.mode !== 'dispatch');
    const launches = settings.map((j) => JSON.stringify(j.meta));
    expect(launches.length).toBeGreaterThanOrEqual(5);
    expect(new Set(launches).size).toBe(launches.length);
    for (const j of evaluator.jobs) for (const m of j.meta) expect(m.kernel).toBe('_gated_kernel');
    // each shape's best warps, from one table or one setting
    expect(evaluator.jobs.find((j) => j.id === summary.best!.id)!.meta.map((m) => m.num_warps)).toEqual([16, 16, 16, 8]);
  });

  it('one statement computing both launches\' warps (Liger\'s softmax and RMSNorm): the search moves them together', { timeout: 120_000 }, async () => {
    // one knob at both launches in the baseline; a tuned file writes a number at each, which read as a knob per
    // launch (they launch different kernels). Before, the drafts' children moved the row launch alone: children of
    // different drafts that differed only at the tiled launch, which never runs here, were each judged
    const oneStatement = TILED_BRANCH_ONE_STATEMENT;
    const evaluator = new LaunchEvaluator(python, oneStatement, shapes, call, time);
    const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/k.py', kernel: '_gated_kernel' };
    const run = new EvolutionRun({ runId: 'v', runDir: '/tmp/none', spec, baselineSource: oneStatement, operators: [new TuneOperator({ fileName: 'k.py' })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 20 }, confirmTop: 0 });
    const summary = await run.run();
    const settings = run.candidates.filter((c) => c.operator !== 'baseline' && c.mode !== 'dispatch' && c.verdict);
    expect(settings.length).toBeGreaterThanOrEqual(4);
    for (const c of settings) {
      // the launch that runs on Blackwell has the warps of the row launch, in every tuned file
      const written = [...c.source.matchAll(/num_warps=(\d+)/g)].map((m) => m[1]);
      expect(written.length).toBe(2);
      expect(written[0]).toBe(written[1]);
      expect(Object.keys(c.knobs!).filter((k) => k.startsWith('num_warps'))).toEqual(['num_warps']);
    }
    const launches = evaluator.jobs.filter((j) => settings.some((c) => c.id === j.id)).map((j) => JSON.stringify(j.meta));
    expect(new Set(launches).size).toBe(launches.length);
    expect(evaluator.jobs.find((j) => j.id === summary.best!.id)!.meta.map((m) => m.num_warps)).toEqual([16, 16, 16, 8]);
  });
});

describe('a config without the knowledge base\'s starts ("tuneStarts": false)', () => {
  it('drafts spread-out probes only: a benchmark against the grids the Hopper starts came from does not start from their answer', async () => {
    const config = validateConfig({ hosts: [{ name: 'h200', type: 'local', hardware: 'nvidia-h200' }], tuneStarts: false });
    expect(() => validateConfig({ hosts: [{ name: 'local', type: 'local' }], tuneStarts: 'no' })).toThrow(/"tuneStarts" must be true or false/);
    expect(() => validateConfig({ hosts: [{ name: 'local', type: 'local' }], tunePastTrend: 1 })).toThrow(/"tunePastTrend" must be true or false/);
    const draftsOf = async (tuneStarts: boolean) => {
      const [op] = await createOperators({ spec: matmulSpec, settings: { operators: ['tune'], policy: 'greedy', hosts: [], jobTimeoutS: 60, profile: false, inputs: 'wide' },
        config: { ...config, tuneStarts }, hardware: 'nvidia-h200', workspaceDir: '/tmp', onEvent: () => undefined });
      const evaluator = new TritonLandscapeEvaluator(TRITON_MATMUL, matmulShapes, outOfResources, 'nvidia-h200');
      const run = new EvolutionRun({ runId: 'k', runDir: '/tmp/none', spec: matmulSpec, baselineSource: TRITON_MATMUL, operators: [op], evaluator,
        policy: new GreedyPolicy(), limits: { budget: 4 }, confirmTop: 0 });
      await run.run();
      return run.candidates.filter((c) => c.mode === 'draft').map((c) => c.rationale ?? '');
    };
    expect((await draftsOf(true))[0]).toMatch(/^known good for matmul on nvidia-h200/);
    const probes = await draftsOf(false);
    expect(probes.length).toBeGreaterThan(0);
    for (const r of probes) expect(r).not.toMatch(/known good/);
  });
});

describe('a row reduction whose block of rows is a loop (the softmax example: one row at a time, 1 warp)', () => {
  const softmax = readFileSync(path.join(__dirname, '../../../examples/triton/softmax/softmax.py'), 'utf8');
  const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/softmax.py', kernel: 'softmax_kernel' };
  // a scripted landscape: the row's covering block is shared by the warps (best at 4 for these rows); the rows a
  // program walks one after another only cost a little more each doubling (fewer programs in flight)
  const time = (v: KnobValues) => Math.exp(0.4 * (Math.log2(v.num_warps) - 2) ** 2 + 0.15 * Math.log2(v.row_block) + 0.02 * (v.num_stages - 1));
  const grid = gridBest({ row_block: [1, 2, 4, 8], num_warps: [1, 2, 4, 8, 16], num_stages: [1, 3] }, time, { row_block: 1, num_warps: 1, num_stages: 1 }, () => undefined);

  it('its drafts probe the warps at one row a program, and it reaches the grid best within 20% of the grid', async () => {
    const budget = Math.floor(0.2 * grid.points);
    const evaluator = new TritonLandscapeEvaluator(softmax, [{ shape: { rows: 4096, cols: 1024 }, time }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 's', runDir: '/tmp/none', spec, baselineSource: softmax, operators: [new TuneOperator({ fileName: 'softmax.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget }, confirmTop: 0 });
    const summary = await run.run();
    const drafts = run.candidates.filter((c) => c.mode === 'draft').map((c) => evaluator.jobs.find((j) => j.id === c.id)!.values);
    expect(drafts.length).toBeGreaterThan(0);
    // the warps' middle quantiles (of 1-32), 8 and 4; the third, 16, lies past a falling slope once 8 reads below 4
    // (trend.ts): not proposed
    expect(drafts).toEqual([{ BLOCK: 0, row_block: 1, num_warps: 8, num_stages: 1 }, { BLOCK: 0, row_block: 1, num_warps: 4, num_stages: 1 }]);
    expect(run.candidates.some((c) => (c.knobs as KnobValues | undefined)?.num_warps === 16 && c.knobs?.row_block === 1)).toBe(false);
    // with "tunePastTrend": false in the config, the third draft is proposed as before the rule
    const [op] = await createOperators({ spec, settings: { operators: ['tune'], policy: 'greedy', hosts: [], jobTimeoutS: 60, profile: false, inputs: 'wide' },
      config: { ...validateConfig({ hosts: [{ name: 'h200', type: 'local' }], tunePastTrend: false }), tuneStarts: false }, hardware: 'nvidia-h200', workspaceDir: '/tmp', onEvent: () => undefined });
    const all = new EvolutionRun({ runId: 's', runDir: '/tmp/none', spec, baselineSource: softmax, operators: [op],
      evaluator: new TritonLandscapeEvaluator(softmax, [{ shape: { rows: 4096, cols: 1024 }, time }], () => undefined, 'nvidia-h200'),
      policy: new GreedyPolicy(), limits: { budget }, confirmTop: 0, pastTrend: false });
    await all.run();
    expect(all.candidates.filter((c) => c.mode === 'draft').map((c) => (c.knobs as KnobValues).num_warps)).toEqual([8, 4, 16]);
    expect(run.candidates.filter((c) => c.state === 'done').length - 1).toBeLessThanOrEqual(budget);
    expect(summary.best!.speedup / grid.best).toBeGreaterThanOrEqual(0.98);
  });

  it('with a budget it does not use up, refines no launch at less than half the speed of the kernel as written, and finds the same best', async () => {
    // row blocks cost much more each doubling here (at 256 rows, 1/30 of the written launch's speed, as the far
    // corners of the example measured on an H100): the search steps to such a launch from a better one, and stops
    const far = (v: KnobValues) => Math.exp(0.4 * (Math.log2(v.num_warps) - 2) ** 2 + 0.6 * Math.log2(v.row_block) + 0.02 * (v.num_stages - 1));
    const evaluator = new TritonLandscapeEvaluator(softmax, [{ shape: { rows: 4096, cols: 1024 }, time: far }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 's', runDir: '/tmp/none', spec, baselineSource: softmax, operators: [new TuneOperator({ fileName: 'softmax.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 2000 }, confirmTop: 0 });
    const finished = new Promise<string>((resolve) => run.on((e) => { if (e.type === 'run-finished') resolve(e.reason); }));
    const summary = await run.run();
    expect(await finished).toBe('exhausted');
    const byId = new Map(run.candidates.map((c) => [c.id, c]));
    const judged = run.candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok' && c.operator === 'tune');
    const refinedFrom = judged.filter((c) => c.mode === 'tune').map((c) => byId.get(c.parents[0])!);
    expect(refinedFrom.length).toBeGreaterThan(10);
    for (const p of refinedFrom) expect(p.state !== 'done' || p.operator === 'baseline' || scoreOf(p) >= FAR_BELOW).toBe(true);
    // some far launches were judged (one step from a good one), not their neighbourhoods: 182 of the 324 settings
    // (91 of them far), where refining every launch judged 323
    const farJudged = judged.filter((c) => scoreOf(c) < FAR_BELOW);
    expect(farJudged.length).toBeGreaterThan(0);
    const space = gridBest({ row_block: [1, 2, 4, 8, 16, 32, 64, 128, 256], num_warps: [1, 2, 4, 8, 16, 32], num_stages: [1, 2, 3, 4, 5, 6] }, far,
      { row_block: 1, num_warps: 1, num_stages: 1 }, () => undefined);
    expect(judged.length).toBeLessThan(0.6 * space.points);
    expect(summary.best!.speedup / space.best).toBeGreaterThanOrEqual(0.999);
  });
});

describe('a launch that leaves its warps to Triton (a lecture GELU: a literal 1024-element block, no num_warps)', () => {
  const gelu = LECTURE_GELU;
  const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/gelu.py', kernel: 'gelu_kernel' };
  // best at 2048 elements on 8 warps: from its first step (the original's block on 8 warps) the search steps the
  // warps back, to the original setting written out (`num_warps=4`) unless it knows that setting is judged
  const time = (v: KnobValues) => Math.exp(0.3 * (Math.log2(v.block_size) - 11) ** 2 + 0.5 * (Math.log2(v.num_warps) - 3) ** 2);

  it('searches the warps as well as the block, and judges no setting twice however it is written', async () => {
    const evaluator = new TritonLandscapeEvaluator(gelu, [{ shape: { n: 16777216 }, time }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 'w', runDir: '/tmp/none', spec, baselineSource: gelu, operators: [new TuneOperator({ fileName: 'gelu.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 8 }, confirmTop: 0 });
    const summary = await run.run();
    const settings = evaluator.jobs.map((j) => `${j.values.block_size}/${j.values.num_warps}`);
    expect(new Set(settings).size).toBe(settings.length);
    expect(evaluator.jobs.some((j) => j.values.num_warps !== 4)).toBe(true);
    expect(summary.best!.speedup).toBeGreaterThan(1);
  });
});

describe('a row kernel that walks long rows in literal 1024-element steps, on Triton\'s default warps', () => {
  // one program a row, the row read in BLOCK steps: the launch as written sits above the middle of the block's
  // domain (16-8192), where every middle quantile of that domain lies below it
  const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/rows.py', kernel: 'row_max_kernel' };
  const drafted = async (time: (v: KnobValues) => number) => {
    const evaluator = new TritonLandscapeEvaluator(ROW_MAX, [{ shape: { rows: 256, cols: 151936 }, time }], () => undefined, 'nvidia-h200');
    const run = new EvolutionRun({ runId: 'r', runDir: '/tmp/none', spec, baselineSource: ROW_MAX, operators: [new TuneOperator({ fileName: 'rows.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 10 }, confirmTop: 0 });
    await run.run();
    return run.candidates.filter((c) => c.mode === 'draft').map((c) => evaluator.jobs.find((j) => j.id === c.id)!.values);
  };

  it('drafts settings on both sides of the written block, each with the warps its block steps give', async () => {
    // a landscape that favours neither side: the written launch is best
    const drafts = await drafted((v) => Math.exp(0.3 * (Math.log2(v.BLOCK_SIZE) - 10) ** 2 + 0.3 * (Math.log2(v.num_warps || 4) - 2) ** 2));
    expect(drafts.some((v) => v.BLOCK_SIZE < 1024)).toBe(true);
    expect(drafts.some((v) => v.BLOCK_SIZE > 1024)).toBe(true);
    // each thread keeps the 8 elements a step the written launch gave it (1024 elements on 4 warps)
    for (const v of drafts.filter((d) => d.BLOCK_SIZE > 1024)) expect(v.BLOCK_SIZE / v.num_warps).toBe(256);
  });
});

describe('bracketing', () => {
  const block = { name: 'B', role: 'block' } as Knob;
  it('keeps probes that already lie on both sides; replaces a probe of the written launch itself, else the last', () => {
    expect(bracketing([{ B: -1 }, { B: 2 }, { B: -3 }], [block], 2)).toEqual([{ B: -1 }, { B: 2 }]);
    expect(bracketing([{ B: -1 }, { B: -3 }, {}, { B: -5 }, { B: 2 }], [block], 3)).toEqual([{ B: -1 }, { B: -3 }, { B: 2 }]);
    expect(bracketing([{ B: -1 }, { B: -3 }, { B: -4 }, { B: 2 }], [block], 3)).toEqual([{ B: -1 }, { B: -3 }, { B: 2 }]);
    // no sound probe on the other side: the probes stay as they were
    expect(bracketing([{ B: 2 }, { B: 3 }, { B: -2 }], [block], 2, (m) => m.B! > 0)).toEqual([{ B: 2 }, { B: 3 }]);
  });
});

describe('a matmul whose launcher picks its tiles per shape from literals (tiles 64 x 128 x 128, 4 warps, 4 stages as the search reckons them)', () => {
  const gram = readFileSync(path.join(__dirname, 'fixtures', 'triton_gram_per_shape.py'), 'utf8');
  const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/gram.py', kernel: 'gram_kernel' };
  // values a computed knob keeps (0) are the launcher's literals of the larger shape's branch
  const as = (v: KnobValues) => ({ BM: v.BM || 64, BN: v.BN || 128, BK: v.BK || 128, num_warps: v.num_warps || 4, num_stages: v.num_stages || 4 });
  const time = (v: KnobValues) => matmulTime({ ...as(v), BLOCK_M: as(v).BM, BLOCK_N: as(v).BN, BLOCK_K: as(v).BK });

  it('drafts its output tile across the domain from the literals, with the K tile at most 64 and the warps the tile wants', async () => {
    const evaluator = new TritonLandscapeEvaluator(gram, [{ shape: { batch: 4, rows: 768, depth: 3072 }, time }], () => undefined);
    const run = new EvolutionRun({ runId: 'x', runDir: '/tmp/none', spec, baselineSource: gram, operators: [new TuneOperator({ fileName: 'gram.py', knowledgeDir: null })],
      evaluator, policy: new GreedyPolicy(), limits: { budget: 6 }, confirmTop: 0 });
    await run.run();
    const drafts = run.candidates.filter((c) => c.mode === 'draft').map((c) => as(evaluator.jobs.find((j) => j.id === c.id)!.values));
    // the middle and a sixth in from either end of 16-256 (one end is the written 64 x 128 tile's neighbour)
    expect(drafts.map((v) => [v.BM, v.BN, v.BK])).toEqual([[64, 64, 64], [32, 32, 32], [128, 128, 64]]);
    for (const v of drafts) expect(v.num_warps).toBe(Math.max(1, (v.BM * v.BN) / 2048));
  });
});
