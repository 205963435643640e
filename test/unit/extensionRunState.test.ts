// The editor's view of a run ends in the state the panel shows: a run that failed says what failed, as the
// same run read back from its store does.
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/engine/candidate';
import { NOT_JUDGED, RunState } from '../../src/extension/runState';

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
});
