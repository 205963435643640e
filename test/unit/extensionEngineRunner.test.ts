// The editor's path to the engine without the editor: a real run on the local host (real g++, real
// harness) reported as panel deltas, then read back from the run store as a reloaded window would.
import { FIGURE_CONFIRMATIONS } from '../../src/engine/leaderConfirmation';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/engine/events';
import { candidateDetails } from '../../src/extension/candidateView';
import { listStoredRuns, runEvolution } from '../../src/extension/engineRunner';
import { RunState } from '../../src/extension/runState';
import type { RunDelta } from '../../src/protocol';
import { DEFAULT_CONFIG } from '../../src/remote/hostConfig';

const ws = mkdtempSync(path.join(tmpdir(), 'ke-runner-'));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe('engineRunner', () => {
  it('runs the tuner on a CPU kernel, streams deltas, and the stored run reads back the same', async () => {
    cpSync(path.resolve('examples/cpp/matmul_blocked'), path.join(ws, 'matmul_blocked'), { recursive: true, filter: (src) => !src.includes('candidates') });
    const storeRoot = path.join(ws, '.kernelevolve', 'runs');
    let state: RunState | undefined;
    const deltas: RunDelta[] = [];
    const events: EngineEvent[] = [];
    const summary = await runEvolution({
      specPath: path.join(ws, 'matmul_blocked', 'spec.py'),
      settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 4 },
      storeRoot,
      signal: new AbortController().signal,
      onEvent: (ev) => {
        events.push(ev);
        if (ev.type === 'run-started') {
          state = new RunState({ runId: ev.runId, runDir: ev.runDir, kernel: ev.kernel, specPath: ev.specPath, sourcePath: path.join(ws, 'matmul_blocked', 'matmul.cpp'), status: 'running', startedAt: ev.at, evaluated: 0, invalidProposals: 0 });
        }
        const d = state?.onEvent(ev);
        if (d) deltas.push(d);
      },
    });
    expect(events[0].type).toBe('run-started');
    expect(events.at(-1)?.type).toBe('run-finished');
    expect(state!.view.status).toBe('finished');
    expect(state!.view.candidates.length).toBe(summary.candidates);
    expect(state!.view.candidates.every((r) => r.state === 'done' && r.status)).toBe(true);
    expect(deltas.some((d) => d.rows?.some((r) => r.state === 'evaluating'))).toBe(true);
    expect(state!.baseline?.id).toBe('c0000');

    const [stored] = await listStoredRuns(storeRoot);
    expect(stored.header.runId).toBe(summary.runId);
    expect(stored.header.status).toBe('finished');
    expect(stored.candidates.map((c) => c.id).sort()).toEqual(state!.view.candidates.map((r) => r.id).sort());
    const reloaded = new RunState(stored.header, stored.candidates, stored.points, stored.log);
    // The run's log (hosts' news, the engine's notices) is in the store and comes back with the run.
    const logged = events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logged.length).toBeGreaterThan(0);
    expect(reloaded.view.log.map((l) => l.message)).toEqual(logged);
    expect(reloaded.view.candidates.map((r) => [r.id, r.status])).toEqual(
      [...state!.view.candidates].sort((a, b) => a.id.localeCompare(b.id)).map((r) => [r.id, r.status]));
    if (summary.best?.status === 'ok' && summary.best.speedup > 1) expect(stored.header.best?.id).toBe(summary.best.id);

    // The leaders were judged once more: their rows show the confirmed score, the header the confirmed best.
    const confirmed = events.filter((e) => e.type === 'candidate-confirmed');
    expect(confirmed.length).toBeGreaterThan(0);
    for (const e of confirmed) {
      const r = state!.view.candidates.find((x) => x.id === e.candidate.id)!;
      expect(r.confirmation).toBe(e.confirmation.status === 'ok' ? 'confirmed' : 'lost');
      expect(r.speedup).toBe(e.confirmation.status === 'ok' ? e.candidate.score : 0); // the score the run ended with
    }
    expect(deltas.some((d) => d.header?.confirming)).toBe(true);
    expect(state!.view.confirming).toBeFalsy();
    expect(summary.best?.confirmed).toBe(true);
    expect(state!.view.best).toEqual({ id: summary.best!.id, speedup: summary.best!.speedup, confirmed: true });
    expect(state!.view.bestOverTime.at(-1)).toMatchObject({ id: summary.best!.id, speedup: summary.best!.speedup });
    // Reloaded: the same confirmations, scores as the run ended with them, the chart by those scores.
    expect(stored.header.best).toEqual({ id: summary.best!.id, speedup: summary.best!.speedup, confirmed: true });
    const storedBest = stored.candidates.find((c) => c.id === summary.best!.id)!;
    expect(storedBest.confirmations?.length).toBeGreaterThanOrEqual(1 + FIGURE_CONFIRMATIONS); // a contender, then its figure
    expect(storedBest.score).toBeCloseTo(summary.best!.speedup, 9);
    expect(reloaded.view.candidates.find((r) => r.id === summary.best!.id)).toMatchObject({ confirmation: 'confirmed', speedup: storedBest.score });
    const topScore = Math.max(...stored.candidates.filter((c) => c.parents.length).map((c) => c.score ?? 0));
    expect(stored.points.at(-1)!.speedup).toBe(topScore);
    for (const p of stored.points) expect(p.speedup).toBe(stored.candidates.find((c) => c.id === p.id)!.score);
    const details = await candidateDetails(stored.header.runId, storedBest, reloaded.baseline, reloaded.view.sourcePath);
    expect(details.confirmation).toMatchObject({ state: 'confirmed', score: storedBest.score });
    expect(details.confirmation!.measurements.map((m) => m.speedup)).toEqual([storedBest.verdict!, ...storedBest.confirmations!].map((v) => v.speedup));
  }, 240_000);

  it('the setting kernelEvolve.inputs reaches the run: "problem" is in its options (run.json), which its jobs and a resumed run take', async () => {
    const dir = path.join(ws, 'inputs');
    cpSync(path.resolve('examples/cpp/matmul_blocked'), dir, { recursive: true, filter: (src) => !src.includes('candidates') });
    const storeRoot = path.join(dir, '.kernelevolve', 'runs');
    const stop = new AbortController();
    await runEvolution({
      specPath: path.join(dir, 'spec.py'), settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 1, inputs: 'problem' },
      storeRoot, signal: stop.signal,
      // the baseline's verdict is enough: what the run was started with is in its record
      onEvent: (ev) => { if (ev.type === 'candidate-evaluated') stop.abort(); },
    });
    const [stored] = await listStoredRuns(storeRoot);
    const record = JSON.parse(readFileSync(path.join(stored.header.runDir, 'run.json'), 'utf8'));
    expect(record.options.inputs).toBe('problem');
  }, 240_000);

  it('a second stop (quit) ends the run without confirming the leaders', async () => {
    const dir = path.join(ws, 'quit');
    cpSync(path.resolve('examples/cpp/matmul_blocked'), dir, { recursive: true, filter: (src) => !src.includes('candidates') });
    const stop = new AbortController();
    const quit = new AbortController();
    const events: EngineEvent[] = [];
    const summary = await runEvolution({
      specPath: path.join(dir, 'spec.py'), settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 6 },
      storeRoot: path.join(dir, '.kernelevolve', 'runs'), signal: stop.signal, quit: quit.signal,
      onEvent: (ev) => {
        events.push(ev);
        if (ev.type === 'candidate-evaluated' && events.filter((e) => e.type === 'candidate-evaluated').length === 3) { stop.abort(); quit.abort(); }
      },
    });
    expect(events.at(-1)).toMatchObject({ type: 'run-finished', reason: 'stopped' });
    expect(events.filter((e) => e.type === 'candidate-confirmed')).toEqual([]);
    expect(summary.best?.confirmed).toBeFalsy();
  }, 240_000);

  it('resumes a stopped run from the store without judging any candidate twice', async () => {
    const dir = path.join(ws, 'resume');
    cpSync(path.resolve('examples/cpp/matmul_blocked'), dir, { recursive: true, filter: (src) => !src.includes('candidates') });
    const storeRoot = path.join(dir, '.kernelevolve', 'runs');
    const settings = { config: DEFAULT_CONFIG, operators: ['tune'], budget: 5 };
    const stop = new AbortController();
    const first: EngineEvent[] = [];
    await runEvolution({
      specPath: path.join(dir, 'spec.py'), settings, storeRoot, signal: stop.signal,
      onEvent: (ev) => {
        first.push(ev);
        // Stop once the baseline and one candidate are judged.
        if (ev.type === 'candidate-evaluated' && first.filter((e) => e.type === 'candidate-evaluated').length === 2) stop.abort();
      },
    });
    expect(first.at(-1)).toMatchObject({ type: 'run-finished', reason: 'stopped' });
    const [stopped] = await listStoredRuns(storeRoot);
    expect(stopped.header.status).toBe('stopped');
    const judgedBefore = stopped.candidates.filter((c) => c.verdict).map((c) => c.id);

    const second: EngineEvent[] = [];
    await runEvolution({ specPath: path.join(dir, 'spec.py'), settings, storeRoot, resumeDir: stopped.header.runDir, signal: new AbortController().signal, onEvent: (ev) => second.push(ev) });
    expect(second[0]).toMatchObject({ type: 'run-started', runId: stopped.header.runId, resumed: true });
    const rejudged = second.filter((e) => e.type === 'candidate-evaluated').map((e) => (e as { candidate: { id: string } }).candidate.id);
    expect(rejudged.filter((id) => judgedBefore.includes(id))).toEqual([]);
    const [resumed] = await listStoredRuns(storeRoot);
    expect(resumed.header.status).toBe('finished');
    expect(resumed.candidates.filter((c) => c.verdict).length).toBeGreaterThan(judgedBefore.length);
  }, 240_000);
});
