// Winners per hardware: one Triton matmul tuned in two stored runs, one on an H200 and one on an A100 (scripted
// landscapes with different optima), keeps a winner for each; the launcher written from them picks each one's
// setting by the device's compute capability (run in Python) and the original on any other device.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EvaluationJob, Evaluator, PoolVerdict } from '../../../src/contract/job';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import type { Operator, ProposalBatch } from '../../../src/engine/operator';
import { formatCandidateSpeedup } from '../../../src/runModel';
import { rowOf } from '../../../src/extension/runState';
import { deviceDispatch, hardwareWinners } from '../../../src/engine/hardwareWinners';
import type { KnobValues } from '../../../src/engine/knobs';
import { RunStore } from '../../../src/engine/runStore';
import { GreedyPolicy } from '../../../src/engine/selection';
import type { KernelSpec } from '../../../src/engine/spec';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { PythonLaunches } from './pythonLaunches';
import { matmulTime, outOfSharedMemory, TRITON_MATMUL, TritonLandscapeEvaluator } from './tritonLandscape';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/matmul.py', kernel: 'matmul_kernel' };
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-winners-'));
const python = new PythonLaunches();
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
  python.dispose();
});

// an A100 wants smaller tiles and 4 warps (less shared memory, fewer SMs' worth of tensor throughput)
const a100Time = (v: KnobValues) => matmulTime({ ...v, BLOCK_M: v.BLOCK_M * 2, BLOCK_K: v.BLOCK_K * 2 });

async function tuneOn(hardware: string, time: (v: KnobValues) => number) {
  const store = RunStore.create({ spec, options: { budget: 14 }, hosts: [{ name: hardware, slots: 1, hardware }], out: path.join(root, `run-${hardware}`) });
  const evaluator = new TritonLandscapeEvaluator(TRITON_MATMUL, [{ shape: { m: 2048, n: 2048, k: 2048 }, time }], outOfSharedMemory, hardware);
  const run = new EvolutionRun({ runId: store.runId, runDir: store.runDir, spec, baselineSource: TRITON_MATMUL, operators: [new TuneOperator({ fileName: 'matmul.py' })],
    evaluator, policy: new GreedyPolicy(), limits: { budget: 14 }, confirmTop: 0 });
  run.on(store.listener);
  const summary = await run.run();
  return { summary, run };
}

describe('winners per hardware', () => {
  it('keeps a winner for each hardware the kernel was tuned on, and writes a launcher choosing per device', async () => {
    const h200 = await tuneOn('nvidia-h200', matmulTime);
    const a100 = await tuneOn('nvidia-a100', a100Time);
    const winners = hardwareWinners(root, spec);
    expect(winners.map((w) => [w.hardware, w.candidateId])).toEqual([['nvidia-a100', a100.summary.best!.id], ['nvidia-h200', h200.summary.best!.id]]);
    expect(winners.every((w) => w.knobs && w.speedup > 1)).toBe(true);
    expect(winners[0].knobs).not.toEqual(winners[1].knobs);

    const d = deviceDispatch(TRITON_MATMUL, 'matmul.py', winners);
    if ('error' in d) throw new Error(d.error);
    expect(d.left).toEqual([]);
    expect(d.source).toContain('KERNELEVOLVE_MATMUL_BY_DEVICE = {');
    const call = 'candidate.matmul(Tensor((2048, 2048)), Tensor((2048, 2048)), Tensor((2048, 2048)))';
    const pick = (cap: string) => {
      const l = python.run(d.source, call, cap)[0];
      return { BLOCK_M: l.BLOCK_M, BLOCK_N: l.BLOCK_N, BLOCK_K: l.BLOCK_K, num_warps: l.num_warps, num_stages: l.num_stages };
    };
    expect(pick('(9, 0)')).toEqual(winners[1].knobs);
    expect(pick('(8, 0)')).toEqual(winners[0].knobs);
    expect(pick('(8, 9)')).toEqual({ BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, num_warps: 1, num_stages: 1 });
  }, 120_000);

  it('a run of another kernel, or one whose hosts name no hardware, is kept apart', () => {
    const other = hardwareWinners(root, { ...spec, kernel: 'other_kernel' });
    expect(other).toEqual([]);
    const d = deviceDispatch(TRITON_MATMUL, 'matmul.py', [{ hardware: 'unknown hardware', runId: 'r', runDir: '/x', candidateId: 'c0003', speedup: 2, operator: 'tune', knobs: { BLOCK_M: 64 }, finishedAt: '' }]);
    expect(d).toEqual({ error: 'no winner can be chosen by device', left: ['unknown hardware: no CUDA compute capability known for it'] });
  });

  it('gives each winner the interval of the evaluation its score comes from, and says when it was confirmed', () => {
    const dir = path.join(root, 'run-by-hand');
    fs.mkdirSync(path.join(dir, 'candidates'), { recursive: true });
    const record = { format: 1, runId: 'by-hand', createdAt: '', updatedAt: '2026-12-01T10:00:00Z', status: 'finished', spec: { ...spec, kernel: 'hand_kernel' },
      options: {}, hosts: [{ name: 'gpu', slots: 1, hardware: 'nvidia-l4' }], best: { id: 'c0004', speedup: 1.5, operator: 'tune', status: 'ok' },
      counters: { used: 4, evaluated: 5, duplicates: 0, invalid: 0 } };
    fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(record));
    fs.writeFileSync(path.join(dir, 'candidates', 'c0004.json'), JSON.stringify({ id: 'c0004', operator: 'tune', mode: 'tune', knobs: { num_warps: 8 }, placement: { host: 'gpu' } }));
    const ok = (speedup: number, lo: number, hi: number) => ({ status: 'ok', reason: 'correct', speedup, speedup_interval: [lo, hi] });
    fs.writeFileSync(path.join(dir, 'verdicts.jsonl'), [
      { id: 'c0014', verdict: ok(9, 8, 10) },
      { id: 'c0004', verdict: ok(1.7, 1.6, 1.8) },
      { id: 'c0004', confirmation: ok(1.5, 1.42, 1.61) },
    ].map((l) => JSON.stringify(l)).join('\n') + '\n');
    const [w] = hardwareWinners(root, { ...spec, kernel: 'hand_kernel' });
    expect(w).toMatchObject({ hardware: 'nvidia-l4', candidateId: 'c0004', speedup: 1.5, interval: [1.42, 1.61], confirmed: true, knobs: { num_warps: 8 } });
  });

  it('gives a confirmed winner the figure and interval the editor gives it (its row and lens): the evaluations after it was picked', async () => {
    // Each program's evaluations in turn, with the interval each measured: the leader's ranking evaluations (the
    // first two) differ from the three its figure comes from, so scoring all of them gives another interval.
    const measured: Record<string, Array<[number, number, number]>> = {
      baseline: [[1, 1, 1]],
      fast: [[2.9, 2.8, 3.0], [2.8, 2.7, 2.9], [2.69, 2.6, 2.78], [2.7, 2.64, 2.76], [2.68, 2.6, 2.77]],
      slow: [[1.6, 1.55, 1.65], [1.5, 1.45, 1.55]],
    };
    const seen = new Map<string, number>();
    const evaluator: Evaluator = {
      totalSlots: 1,
      async evaluate(job: EvaluationJob): Promise<PoolVerdict> {
        const name = /^(\w+)_RUN = 1$/m.exec(job.candidateSource)?.[1] ?? 'baseline';
        const n = seen.get(name) ?? 0;
        seen.set(name, n + 1);
        const [speedup, lo, hi] = measured[name][Math.min(n, measured[name].length - 1)];
        return { status: 'ok', reason: 'Correct.', speedup, speedup_interval: [lo, hi], host: 'local' };
      },
    };
    const names = ['fast', 'slow'];
    const operator: Operator = {
      name: 'list',
      async propose(): Promise<ProposalBatch> {
        const name = names.shift();
        return name ? { proposals: [{ source: `${TRITON_MATMUL}${name}_RUN = 1\n`, parents: ['c0000'], operator: 'list', rationale: name }] } : { proposals: [], exhausted: true };
      },
    };
    const figured = { ...spec, kernel: 'figured_kernel' };
    const store = RunStore.create({ spec: figured, options: {}, hosts: [{ name: 'local', slots: 1 }], out: path.join(root, 'run-figured') });
    const run = new EvolutionRun({ runId: store.runId, runDir: store.runDir, spec: figured, baselineSource: TRITON_MATMUL, operators: [operator],
      evaluator, limits: { budget: 2 } });
    run.on(store.listener);
    const summary = await run.run();
    const live = run.candidates.find((c) => c.rationale === 'fast')!;
    expect(summary.best?.id).toBe(live.id);
    expect(live.figureFrom).toBeGreaterThan(0);
    const [w] = hardwareWinners(root, figured);
    const shown = `${w.speedup.toFixed(2)}x${w.interval ? ` (${w.interval[0].toFixed(2)}-${w.interval[1].toFixed(2)})` : ''}${w.confirmed ? ' confirmed' : ''}`;
    // the editor's figure while the run is on screen, and after a reload (the run read back from its store)
    expect(shown).toBe(formatCandidateSpeedup(rowOf(live)));
    expect(shown).toBe(formatCandidateSpeedup(rowOf(RunStore.load(store.runDir).candidates.find((c) => c.id === live.id)!)));
    expect(w).toMatchObject({ candidateId: live.id, speedup: rowOf(live).speedup, interval: rowOf(live).interval, confirmed: true });
  });

  it('names a host without configured hardware by the machine that judged it: the CPU for a C++ kernel, the GPU for Triton', () => {
    const machine = { cpu: 'AMD EPYC 7763 64-Core Processor (128 cores)', gpu: 'NVIDIA H200' };
    const stored = (name: string, backend: 'cpp' | 'triton', kernel: string) => {
      const dir = path.join(root, name);
      fs.mkdirSync(path.join(dir, 'candidates'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ format: 1, runId: name, createdAt: '', updatedAt: '2026-12-01T10:00:00Z', status: 'finished',
        spec: { ...spec, backend, kernel }, options: {}, hosts: [{ name: 'local', slots: 1 }], best: { id: 'c0002', speedup: 1.3, operator: 'tune', status: 'ok' },
        counters: { used: 2, evaluated: 3, duplicates: 0, invalid: 0 } }));
      fs.writeFileSync(path.join(dir, 'candidates', 'c0002.json'), JSON.stringify({ id: 'c0002', operator: 'tune', timings: { proposedAt: 0 } }));
      fs.writeFileSync(path.join(dir, 'verdicts.jsonl'), JSON.stringify({ id: 'c0002', verdict: { status: 'ok', reason: 'correct', speedup: 1.3 },
        placement: { host: 'local', machine } }) + '\n');
    };
    stored('run-cpu', 'cpp', 'cpu_kernel');
    stored('run-gpu', 'triton', 'gpu_kernel');
    expect(hardwareWinners(root, { ...spec, kernel: 'cpu_kernel' }).map((w) => w.hardware)).toEqual(['AMD EPYC 7763 64-Core Processor (128 cores)']);
    expect(hardwareWinners(root, { ...spec, kernel: 'gpu_kernel' }).map((w) => w.hardware)).toEqual(['NVIDIA H200']);
  });
});

