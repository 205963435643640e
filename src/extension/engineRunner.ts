// The one place the editor calls the engine: a run is started by the same startRun as the CLI's (src/run/),
// from the editor's settings, and persisted in the workspace's run store.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Candidate } from '../engine/candidate';
import type { EngineEvent, RunSummary } from '../engine/events';
import { RunStore } from '../engine/runStore';
import { pairedScore, scoreOf } from '../engine/pairedScore';
import type { HostOptions } from '../remote/hostConfig';
import { startRun, type StartedRun } from '../run/startRun';
import type { BestPoint, RunHeader, RunStatus, RunView } from '../protocol';
import type { EvolveSettings } from './settings';

export interface EvolveRequest {
  specPath: string;
  settings: EvolveSettings;
  apiKey?: string;
  /** `<workspace>/.kernelevolve/runs`. */
  storeRoot: string;
  /** A stored run to continue. */
  resumeDir?: string;
  hostOptions?: HostOptions;
  onEvent: (event: EngineEvent) => void;
  signal: AbortSignal;
  /** Aborted on a second Stop: the run ends at once, without confirming its leaders. */
  quit?: AbortSignal;
}

export interface StoredRun {
  header: RunHeader;
  candidates: Candidate[];
  points: BestPoint[];
  /** The run's stored log (hosts' news, e.g. Slurm job states). */
  log: RunView['log'];
}

/** Starts (or resumes) one evolution from the editor's settings; the run reports every engine event. */
export function startEditorRun(req: EvolveRequest): Promise<StartedRun> {
  const s = req.settings;
  return startRun({
    specPath: req.specPath,
    resume: req.resumeDir ? RunStore.load(req.resumeDir) : undefined,
    settings: { operators: s.operators, budget: s.budget, timeMin: s.timeMinutes, plateau: s.plateau, target: s.targetSpeedup, model: s.model, inputs: s.inputs },
    config: s.config,
    llmEndpoint: { baseURL: s.baseURL, apiKey: req.apiKey },
    hostOptions: req.hostOptions,
    workspace: path.resolve(req.storeRoot, '..', '..'),
    onEvent: req.onEvent,
    signal: req.signal,
    quit: req.quit,
  });
}

/** Runs (or resumes) one evolution to its end, reporting every engine event. */
export async function runEvolution(req: EvolveRequest): Promise<RunSummary> {
  return (await startEditorRun(req)).finished;
}

/** Best speedup so far, as the candidates were judged: the engine's score (the paired speedup; a confirmed
 *  leader's confirmed figure, 0 for one that lost its place), as the live run reports it. */
export function bestOverTime(candidates: readonly Candidate[], startedAt: number): BestPoint[] {
  const judged = candidates.filter((c) => c.verdict && c.operator !== 'baseline' && c.parents.length > 0)
    .sort((a, b) => (a.timings.finishedAt ?? a.timings.proposedAt) - (b.timings.finishedAt ?? b.timings.proposedAt));
  const points: BestPoint[] = [];
  let best = 0;
  for (const c of judged) {
    const f = scoreOf(c);
    if (f > best) {
      best = f;
      points.push({ t: Math.max(0, (c.timings.finishedAt ?? c.timings.proposedAt) - startedAt), speedup: f, id: c.id });
    }
  }
  return points;
}

/** The scores the run ended with, as the engine scores them (pairedScore.ts: over each candidate's verdict and
 *  confirmations); a stored candidate's own score is from when it was last saved. */
export function rescore(candidates: Candidate[]): void {
  for (const c of candidates) if (c.verdict) c.score = pairedScore(c);
}

/** Every run in the store; one that says `running` was cut short (this window is not running it). */
export async function listStoredRuns(storeRoot: string): Promise<StoredRun[]> {
  const dirs = await fs.readdir(storeRoot).catch(() => [] as string[]);
  const out: StoredRun[] = [];
  for (const d of dirs) {
    let loaded: ReturnType<typeof RunStore.load>;
    try {
      loaded = RunStore.load(path.join(storeRoot, d));
    } catch {
      continue; // not a run (or one from another format): the CLI reports those when asked
    }
    const r = loaded.record;
    const status: RunStatus = r.status === 'running' ? 'interrupted' : r.status === 'error' ? 'failed' : r.status;
    const startedAt = Date.parse(r.createdAt) || 0;
    rescore(loaded.candidates);
    out.push({
      header: {
        runId: r.runId, runDir: loaded.store.runDir, kernel: r.spec.kernel, specPath: r.spec.specPath, sourcePath: r.spec.sourcePath,
        status, startedAt, reason: r.error?.message ?? r.reason, ...(r.error?.candidate ? { failedCandidate: r.error.candidate } : {}), evaluated: r.counters.evaluated, used: r.counters.used,
        budget: typeof r.options.budget === 'number' ? r.options.budget : undefined,
        best: r.best && r.best.status === 'ok' ? { id: r.best.id, speedup: r.best.speedup, ...((r.best as RunSummary['best'])?.confirmed ? { confirmed: true } : {}) } : undefined,
        invalidProposals: r.counters.invalid,
      },
      candidates: loaded.candidates,
      points: bestOverTime(loaded.candidates, startedAt),
      log: loaded.log.slice(-500), // the panel shows the recent news; the file keeps all of it
    });
  }
  return out;
}
