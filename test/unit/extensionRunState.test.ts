// The editor's view of a run ends in the state the panel shows: a run that failed says what failed, as the
// same run read back from its store does.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Evaluator } from '../../src/contract/job';
import type { Candidate } from '../../src/engine/candidate';
import { EvolutionRun } from '../../src/engine/evolutionRun';
import { RunStore } from '../../src/engine/runStore';
import { listStoredRuns } from '../../src/extension/engineRunner';
import { JUDGING_FAILED, NOT_JUDGED, RunState } from '../../src/extension/runState';

const header = { runId: 'r1', runDir: '/tmp/r1', kernel: 'bias_gelu_kernel', specPath: '/tmp/spec.py', sourcePath: '/tmp/k.py', status: 'running' as const, startedAt: 0, evaluated: 0, invalidProposals: 0 };
const summary = { runId: 'r1', runDir: '/tmp/r1', candidates: 1, baseline: undefined, best: undefined };

describe('RunState at the end of a run', () => {
  it('gives a failed run the engine\'s error as its reason, not the word "error"', () => {
    const state = new RunState(header);
    const message = "Candidate c0000 could not be evaluated: Importing bias_gelu_kernel_spec.py failed: ModuleNotFoundError: No module named 'torch'";
    const delta = state.onEvent({ type: 'run-finished', reason: 'error', summary, at: 1, error: { kind: 'baseline', message } });
    expect(delta?.header).toMatchObject({ status: 'failed', reason: message });
    expect(state.view).toMatchObject({ status: 'failed', reason: message });
  });

  it('keeps the termination reason of a run that ended otherwise', () => {
    const state = new RunState(header);
    expect(state.onEvent({ type: 'run-finished', reason: 'exhausted', summary, at: 1 })?.header).toMatchObject({ status: 'finished', reason: 'exhausted' });
  });

  it('ends a stopped run\'s unjudged rows in the same delta that says it stopped', () => {
    const state = new RunState(header);
    const c3 = { id: 'c0003', parents: ['c0000'], operator: 'tune', mode: 'draft', source: '', hash: 'h3', state: 'proposed', timings: { proposedAt: 1 } } as Candidate;
    state.onEvent({ type: 'candidate-proposed', candidate: c3, at: 1 });
    state.onEvent({ type: 'candidate-started', id: 'c0003', host: 'local', at: 2 });
    const delta = state.onEvent({ type: 'run-finished', reason: 'stopped', summary, at: 3 });
    expect(delta?.header).toMatchObject({ status: 'stopped' });
    expect(delta?.rows).toEqual([expect.objectContaining({ id: 'c0003', state: NOT_JUDGED })]);
    expect(state.settle()).toBeUndefined();
  });

  it('shows the failure on the row of a baseline the host could not judge (Triton without torch), live and read back from the store', async () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-runstate-'));
    try {
      const spec = { specPath: path.join(ws, 'spec.py'), backend: 'triton' as const, sourcePath: path.join(ws, 'k.py'), kernel: 'bias_gelu_kernel' };
      const store = RunStore.create({ spec, options: {}, hosts: [{ name: 'local', slots: 1 }], workspace: ws });
      // what the local host throws when the harness cannot import the spec there
      const evaluator: Evaluator = { totalSlots: 1, evaluate: async () => { throw new Error("Importing spec.py failed: ModuleNotFoundError: No module named 'torch'"); } };
      const run = new EvolutionRun({ runId: store.runId, runDir: store.runDir, spec, baselineSource: 'import triton\n', operators: [], evaluator, limits: { budget: 2 } });
      const state = new RunState({ ...header, runId: store.runId, runDir: store.runDir });
      run.on(store.listener);
      run.on((e) => state.onEvent(e));
      await run.run();
      expect(state.view.status).toBe('failed');
      const live = state.view.candidates.find((r) => r.id === 'c0000');
      expect(live).toMatchObject({ state: JUDGING_FAILED, reason: expect.stringMatching(/^Candidate c0000 could not be evaluated: Importing spec\.py failed: ModuleNotFoundError: No module named 'torch'/) });
      expect(state.settle()).toBeUndefined();

      const [stored] = await listStoredRuns(path.join(ws, '.kernelevolve', 'runs'));
      const reloaded = new RunState(stored.header, stored.candidates, stored.points, stored.log);
      expect(reloaded.view.candidates.find((r) => r.id === 'c0000')).toMatchObject({ state: JUDGING_FAILED, reason: live!.reason });
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});

