// The one place the editor calls the engine: a run is the engine's EvolutionRun over a HostPool built from
// the settings, persisted by the engine's RunStore in the workspace, the same pieces the CLI uses.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Candidate } from '../engine/candidate';
import type { EngineEvent, RunSummary } from '../engine/events';
import { EvolutionRun } from '../engine/evolutionRun';
import type { Operator } from '../engine/operator';
import { RunStore } from '../engine/runStore';
import type { KernelSpec } from '../engine/spec';
import { loadSpec } from '../engine/spec';
import { TuneOperator } from '../engine/tuneOperator';
import { RunReference, scoreOf } from '../engine/runReference';
import { createHosts, type HostOptions } from '../remote/hostConfig';
import '../remote/hosts';
import { HostPool } from '../remote/hostPool';
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

async function operatorsFor(names: string[], spec: KernelSpec, req: EvolveRequest, runDir: string, workspace: string): Promise<Operator[]> {
  const ops: Operator[] = [];
  for (const name of names) {
    if (name === 'tune') ops.push(new TuneOperator({ fileName: path.basename(spec.sourcePath) }));
    else if (name === 'llm') {
      const { createLlmOperator } = await import('../engine/llm/llmOperator');
      ops.push(createLlmOperator({
        model: req.settings.model, llm: req.settings.config.llm, baseURL: req.settings.baseURL, apiKey: req.apiKey,
        knowledge: req.settings.config.knowledge, workspaceDir: workspace, runDir, onEvent: req.onEvent,
      }));
    }
  }
  return ops;
}

/** Runs (or resumes) one evolution to its end, reporting every engine event. */
export async function runEvolution(req: EvolveRequest): Promise<RunSummary> {
  const workspace = path.resolve(req.storeRoot, '..', '..');
  const loaded = req.resumeDir ? RunStore.load(req.resumeDir) : undefined;
  const spec = loaded ? await loadSpec(loaded.record.spec.specPath) : await loadSpec(req.specPath);
  const hosts = createHosts(req.settings.config, [], req.hostOptions);
  const pool = new HostPool(hosts, { onHostFailure: (host, e) => req.onEvent({ type: 'log', level: 'warn', message: `host ${host} failed: ${e.message}`, at: Date.now() }) });
  // Slurm hosts report their jobs (submitted, running on a node, ended, requeued) as the run's log.
  for (const h of hosts) h.onLog?.((level, message) => req.onEvent({ type: 'log', level, message, at: Date.now() }));
  try {
    const options = { operators: req.settings.operators, budget: req.settings.budget, time: req.settings.timeMinutes, plateau: req.settings.plateau, target: req.settings.targetSpeedup, model: req.settings.model, source: 'vscode' };
    const store = loaded?.store ?? RunStore.create({ spec, options, hosts: hosts.map((h) => ({ name: h.name, slots: h.slots, hardware: h.hardware })), workspace });
    const baselineSource = loaded?.candidates.find((c) => c.operator === 'baseline' || c.parents.length === 0)?.source ?? await fs.readFile(spec.sourcePath, 'utf8');
    const run = new EvolutionRun({
      runId: store.runId,
      runDir: store.runDir,
      spec,
      baselineSource,
      operators: await operatorsFor(req.settings.operators, spec, req, store.runDir, workspace),
      evaluator: pool,
      limits: { budget: req.settings.budget, timeS: req.settings.timeMinutes ? req.settings.timeMinutes * 60 : undefined, plateau: req.settings.plateau, target: req.settings.targetSpeedup },
      resume: loaded ? { candidates: loaded.candidates, used: loaded.record.counters.used, duplicates: loaded.record.counters.duplicates, invalid: loaded.record.counters.invalid } : undefined,
      signal: req.signal,
      quit: req.quit,
    });
    run.on(store.listener); // persisted before the editor sees it
    run.on(req.onEvent);
    return await run.run();
  } finally {
    await pool.dispose();
  }
}

/** Best speedup so far, as the candidates were judged: the engine's score (against the run's baseline timings;
 *  a confirmed leader's confirmed figure, 0 for one that lost its place), as the live run reports it. */
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

/** The scores the run ended with: each against the median of every baseline timing of the run (its verdicts and
 *  confirmations), as the engine scores them; a stored candidate's own score is from when it was last saved. */
export function rescore(candidates: Candidate[]): void {
  const reference = new RunReference();
  for (const c of candidates) {
    reference.add(c.verdict);
    for (const v of c.confirmations ?? []) reference.add(v);
  }
  for (const c of candidates) if (c.verdict) c.score = reference.score(c);
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
        status, startedAt, reason: r.error?.message ?? r.reason, evaluated: r.counters.evaluated, used: r.counters.used,
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
