// The runs of this workspace: those started here and those found in the run store (.kernelevolve/runs),
// each a RunState kept current from the engine's events. Starting, stopping and resuming go through
// engineRunner, the one file that knows the engine's entry points.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Candidate } from '../engine/candidate';
import type { KernelSpec } from '../engine/spec';
import { hardwareWinners } from '../engine/hardwareWinners';
import type { CandidateDetails, HardwareWinnerRow, RunDelta, RunHeader } from '../protocol';
import { candidateDetails, isAcceptable } from './candidateView';
import { DisposableStore } from './disposables';
import { listStoredRuns, runEvolution, type EvolveRequest } from './engineRunner';
import { RunState } from './runState';
import type { EvolveSettings } from './settings';

interface ActiveRun {
  controller: AbortController;
  /** Aborted by a second Stop: the engine skips confirming the leaders. */
  quit: AbortController;
  done: Promise<void>;
}

export interface RunLaunch {
  spec: KernelSpec;
  settings: EvolveSettings;
  apiKey?: string;
  hostOptions?: EvolveRequest['hostOptions'];
}

export interface EarlyFailure {
  runId?: string;
  spec: KernelSpec;
  kind?: 'host' | 'baseline' | 'operator';
  message: string;
}

export class RunManager implements vscode.Disposable {
  private readonly runs = new Map<string, RunState>();
  private readonly active = new Map<string, ActiveRun>();
  private readonly store = new DisposableStore();
  private readonly updateEmitter = this.store.add(new vscode.EventEmitter<RunDelta>());
  private readonly runsEmitter = this.store.add(new vscode.EventEmitter<string | undefined>());
  /** A delta of one run (rows, progress, best). */
  readonly onDidUpdate = this.updateEmitter.event;
  /** The set of runs changed; carries the id of a run that just started. */
  readonly onDidChangeRuns = this.runsEmitter.event;
  private readonly failEmitter = this.store.add(new vscode.EventEmitter<EarlyFailure>());
  /** A run ended in an error before it judged any candidate but the baseline. */
  readonly onDidFailEarly = this.failEmitter.event;

  constructor(private readonly storeRoot: string | undefined, private readonly log: vscode.OutputChannel, private readonly dismissed: vscode.Memento) {}

  headers(): RunHeader[] {
    return [...this.runs.values()].map((r) => r.header());
  }

  get(runId: string): RunState | undefined {
    return this.runs.get(runId);
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  activeRuns(): RunState[] {
    return [...this.active.keys()].map((id) => this.runs.get(id)!).filter(Boolean);
  }

  /** Reads the run store; runs that were running when the window closed come back as interrupted. */
  async loadStored(): Promise<void> {
    if (!this.storeRoot) return;
    try {
      for (const stored of await listStoredRuns(this.storeRoot)) {
        if (this.runs.has(stored.header.runId)) continue;
        this.runs.set(stored.header.runId, new RunState(stored.header, stored.candidates, stored.points, stored.log));
      }
    } catch (e) {
      this.log.appendLine(`Could not read the run store ${this.storeRoot}: ${(e as Error).message}`);
    }
    this.runsEmitter.fire(undefined);
  }

  /** Starts a new run (or resumes `resumeRunId`); resolves with the run id once the run exists. */
  async start(launch: RunLaunch, resumeRunId?: string): Promise<string> {
    if (!this.storeRoot) throw new Error('Open a folder first: KernelEvolve keeps its runs in the workspace (.kernelevolve/runs).');
    const controller = new AbortController();
    const resumed = resumeRunId ? this.runs.get(resumeRunId) : undefined;
    let state: RunState | undefined = resumed;
    let resolveStarted!: (id: string) => void;
    let rejectStarted!: (e: Error) => void;
    const started = new Promise<string>((res, rej) => { resolveStarted = res; rejectStarted = rej; });
    const pending: Parameters<EvolveRequest['onEvent']>[0][] = [];
    let failed = false;
    const onEvent: EvolveRequest['onEvent'] = (ev) => {
      if (!state) {
        if (ev.type !== 'run-started') { pending.push(ev); return; }
        state = new RunState({
          runId: ev.runId, runDir: ev.runDir, kernel: ev.kernel, specPath: ev.specPath, sourcePath: launch.spec.sourcePath,
          status: 'running', startedAt: ev.at, evaluated: 0, budget: launch.settings.budget, invalidProposals: 0,
        });
        this.runs.set(ev.runId, state);
        this.active.set(ev.runId, active);
        this.runsEmitter.fire(ev.runId);
        resolveStarted(ev.runId);
        for (const p of pending.splice(0)) this.forward(state, p);
        return;
      }
      if (ev.type === 'run-started') {
        this.active.set(state.runId, active);
        this.runsEmitter.fire(state.runId);
        resolveStarted(state.runId);
      }
      if (ev.type === 'run-finished' && ev.reason === 'error' && state.view.evaluated <= 1) {
        failed = true;
        this.failEmitter.fire({ runId: state.runId, spec: launch.spec, kind: ev.error?.kind, message: ev.error?.message ?? 'the run ended in an error' });
      }
      if (ev.type === 'log' || ev.type === 'run-finished') this.log.appendLine(`[${state.runId}] ${ev.type === 'log' ? ev.message : `finished: ${ev.reason}${ev.error ? ' — ' + ev.error.message : ''}`}`);
      this.forward(state, ev);
    };
    const active: ActiveRun = { controller, quit: new AbortController(), done: Promise.resolve() };
    active.done = runEvolution({
      specPath: launch.spec.specPath,
      settings: launch.settings,
      apiKey: launch.apiKey,
      storeRoot: this.storeRoot,
      resumeDir: resumed?.view.runDir,
      hostOptions: launch.hostOptions,
      onEvent,
      signal: controller.signal,
      quit: active.quit.signal,
    }).then(
      () => undefined,
      (e: Error) => {
        this.log.appendLine(`Run failed: ${e.stack ?? e.message}`);
        if (!failed && (!state || state.view.evaluated <= 1)) this.failEmitter.fire({ runId: state?.runId, spec: launch.spec, message: e.message });
        if (state) {
          const delta = state.apply({ runId: state.runId, header: { status: 'failed', reason: e.message }, log: [{ level: 'error', message: e.message, at: Date.now() }] });
          this.updateEmitter.fire(delta);
        }
        rejectStarted(e);
      },
    ).finally(() => {
      if (state) {
        this.active.delete(state.runId);
        if (state.view.status === 'running') {
          this.updateEmitter.fire(state.apply({ runId: state.runId, header: { status: 'stopped', reason: 'stopped', confirming: undefined } }));
        }
        const settled = state.settle();
        if (settled) this.updateEmitter.fire(settled);
        this.runsEmitter.fire(undefined);
      }
    });
    return started;
  }

  private forward(state: RunState, ev: Parameters<EvolveRequest['onEvent']>[0]): void {
    const delta = state.onEvent(ev);
    if (delta) this.updateEmitter.fire(delta);
  }

  /** The first Stop ends the search and lets the engine confirm the leaders (the panel says so); a second
   *  Stop, while that goes on, ends the run at once. Resolves once the run has ended. */
  async stop(runId: string): Promise<boolean> {
    const a = this.active.get(runId);
    if (!a) return false;
    if (a.controller.signal.aborted) a.quit.abort();
    else {
      a.controller.abort();
      const state = this.runs.get(runId);
      if (state?.view.status === 'running') this.updateEmitter.fire(state.apply({ runId, header: { confirming: true } }));
    }
    await a.done;
    return true;
  }

  /** Waits for a run to end (tests, and stop-then-resume). */
  async whenDone(runId: string): Promise<void> {
    await this.active.get(runId)?.done;
  }

  async details(runId: string, id: string): Promise<CandidateDetails> {
    const run = this.runs.get(runId);
    const c = run?.candidates.get(id);
    if (!run || !c) throw new Error(`Candidate ${id} of run ${runId} is not known (was the run store deleted?).`);
    const details = await candidateDetails(runId, c, run.baseline, run.view.sourcePath);
    // Not judged: the details say what its row says (queued, evaluating, not judged, or failed and why).
    const row = c.verdict ? undefined : run.view.candidates.find((r) => r.id === id);
    return row ? { ...details, status: row.state, ...(row.reason ? { reason: row.reason } : {}) } : details;
  }

  /** The winners by hardware of the run's kernel, across the runs stored beside it (its own included). */
  winnersFor(runId: string): HardwareWinnerRow[] {
    const run = this.runs.get(runId);
    if (!run) return [];
    return hardwareWinners(path.dirname(run.view.runDir), { sourcePath: run.view.sourcePath, kernel: run.view.kernel }).map((w) => ({
      hardware: w.hardware, runId: w.runId, candidateId: w.candidateId, speedup: w.speedup, operator: w.operator,
      ...(w.interval ? { interval: w.interval } : {}), ...(w.confirmed ? { confirmed: true } : {}), ...(w.mode ? { mode: w.mode } : {}),
    }));
  }

  /** The best acceptable variant of the newest run on this kernel that the user has not dismissed. */
  bestFor(sourcePath: string, kernel: string): { run: RunState; candidate: Candidate } | undefined {
    const target = path.resolve(sourcePath);
    const runs = [...this.runs.values()]
      .filter((r) => path.resolve(r.view.sourcePath) === target && r.view.kernel === kernel)
      .sort((a, b) => b.view.startedAt - a.view.startedAt);
    for (const run of runs) {
      const c = run.best();
      if (c && isAcceptable(c) && !this.isDismissed(run.runId, c.id)) return { run, candidate: c };
    }
    return undefined;
  }

  isDismissed(runId: string, id: string): boolean {
    return this.dismissed.get<string[]>('kernelEvolve.dismissed', []).includes(`${runId}/${id}`);
  }

  /** The newest run's best acceptable variant for the kernel that the user dismissed (the lens offers it again). */
  dismissedBestFor(sourcePath: string, kernel: string): { run: RunState; candidate: Candidate } | undefined {
    const target = path.resolve(sourcePath);
    const run = [...this.runs.values()].filter((r) => path.resolve(r.view.sourcePath) === target && r.view.kernel === kernel)
      .sort((a, b) => b.view.startedAt - a.view.startedAt)[0];
    const c = run?.best();
    return run && c && isAcceptable(c) && this.isDismissed(run.runId, c.id) ? { run, candidate: c } : undefined;
  }

  async undismiss(runId: string, id: string): Promise<void> {
    const list = this.dismissed.get<string[]>('kernelEvolve.dismissed', []);
    await this.dismissed.update('kernelEvolve.dismissed', list.filter((k) => k !== `${runId}/${id}`));
    this.runsEmitter.fire(undefined);
  }

  async dismiss(runId: string, id: string): Promise<void> {
    const list = this.dismissed.get<string[]>('kernelEvolve.dismissed', []);
    await this.dismissed.update('kernelEvolve.dismissed', [...list, `${runId}/${id}`]);
    this.runsEmitter.fire(undefined);
  }

  dispose(): void {
    for (const a of this.active.values()) { a.controller.abort(); a.quit.abort(); }
    this.store.dispose();
  }
}
