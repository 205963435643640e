import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import { RunStore, RunStoreError } from '../../../src/engine/runStore';
import type { KernelSpec } from '../../../src/engine/spec';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { LandscapeEvaluator, MATMUL, matmulLandscape } from './landscape';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-store-'));
  dirs.push(d);
  return d;
}

async function runOnce(store: RunStore, budget: number, evaluator: LandscapeEvaluator, resume?: ReturnType<typeof RunStore.load>) {
  const run = new EvolutionRun({
    runId: store.runId, runDir: store.runDir, spec, baselineSource: MATMUL,
    operators: [new TuneOperator({ fileName: 'matmul.cpp' })], evaluator, limits: { budget },
    resume: resume ? { candidates: resume.candidates, used: resume.record.counters.used, invalid: resume.invalid.length } : undefined,
  });
  run.on(store.listener);
  return { summary: await run.run(), run };
}

describe('RunStore', () => {
  it('writes run.json, each candidate source and metadata, and verdicts.jsonl', async () => {
    const ws = tmp();
    const store = RunStore.create({ spec, options: { budget: 5 }, hosts: [{ name: 'local', slots: 1 }], workspace: ws });
    expect(store.runDir.startsWith(path.join(ws, '.kernelevolve', 'runs'))).toBe(true);
    await runOnce(store, 5, new LandscapeEvaluator(matmulLandscape, MATMUL));
    const record = JSON.parse(fs.readFileSync(path.join(store.runDir, 'run.json'), 'utf8'));
    expect(record.status).toBe('finished');
    expect(record.reason).toBe('budget');
    expect(record.counters.used).toBe(5);
    expect(record.best.id).toMatch(/^c\d{4}$/);
    expect(record.hosts).toEqual([{ name: 'local', slots: 1 }]);
    expect(fs.readFileSync(path.join(store.runDir, 'candidates', 'c0000.cpp'), 'utf8')).toBe(MATMUL);
    const meta = JSON.parse(fs.readFileSync(path.join(store.runDir, 'candidates', 'c0001.json'), 'utf8'));
    expect(meta).toMatchObject({ id: 'c0001', parents: ['c0000'], operator: 'tune', sourceFile: 'c0001.cpp', state: 'done' });
    expect(meta.source).toBeUndefined();
    const lines = fs.readFileSync(path.join(store.runDir, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.verdict).map((l) => l.id)).toEqual(['c0000', 'c0001', 'c0002', 'c0003', 'c0004', 'c0005']);
  });

  it("keeps the run's log (a host's news, such as Slurm job states) and gives it back on load", async () => {
    const out = path.join(tmp(), 'run');
    const store = RunStore.create({ spec, options: {}, hosts: [{ name: 'gpu-pool', slots: 2 }], out });
    store.listener({ type: 'log', level: 'info', message: 'gpu-pool: worker job 4242 RUNNING on node-7', at: 1 });
    store.listener({ type: 'log', level: 'warn', message: 'gpu-pool: job 4242 ended (PREEMPTED); c0003 requeued', at: 2 });
    const loaded = RunStore.load(out);
    expect(loaded.log).toEqual([
      { level: 'info', message: 'gpu-pool: worker job 4242 RUNNING on node-7', at: 1 },
      { level: 'warn', message: 'gpu-pool: job 4242 ended (PREEMPTED); c0003 requeued', at: 2 },
    ]);
  });

  it('resumes without judging anything twice, and judges what a kill left unjudged', async () => {
    const out = path.join(tmp(), 'run');
    const store = RunStore.create({ spec, options: {}, hosts: [], out });
    await runOnce(store, 8, new LandscapeEvaluator(matmulLandscape, MATMUL));
    // what a SIGKILL during c0008's evaluation leaves: its verdict line cut short, and c0007's line lost
    const vfile = path.join(out, 'verdicts.jsonl');
    const lines = fs.readFileSync(vfile, 'utf8').trim().split('\n');
    fs.writeFileSync(vfile, lines.slice(0, 7).join('\n') + '\n' + lines[8].slice(0, 25));
    const loaded = RunStore.load(out);
    expect(loaded.candidates.length).toBe(9);
    expect(loaded.candidates.filter((c) => !c.verdict).map((c) => c.id)).toEqual(['c0007', 'c0008']);
    const evaluator = new LandscapeEvaluator(matmulLandscape, MATMUL);
    const { summary, run } = await runOnce(loaded.store, 14, evaluator, loaded);
    expect(evaluator.jobs.slice(0, 2)).toEqual(['c0007', 'c0008']);
    expect(evaluator.jobs).not.toContain('c0000');
    expect(evaluator.jobs.filter((id) => Number(id.slice(1)) <= 6)).toEqual([]);
    expect(summary.candidates).toBe(15);
    expect(run.candidates.every((c) => c.verdict)).toBe(true);
    const again = RunStore.load(out);
    expect(again.candidates.length).toBe(15);
    expect(again.record.counters.used).toBe(14);
  });

  it('refuses an --out folder that already holds a run, and a folder that is not a run', async () => {
    const out = path.join(tmp(), 'run');
    RunStore.create({ spec, options: {}, hosts: [], out });
    expect(() => RunStore.create({ spec, options: {}, hosts: [], out })).toThrow(/already holds a run; continue it with --resume/);
    expect(() => RunStore.load(tmp())).toThrow(RunStoreError);
  });
});
