// One evolution run (OpenEvolve's controller): a graph of candidates grown by operators and judged by hosts.
// Generation and evaluation are separate queues: operators propose while hosts evaluate, with enough
// proposals in flight to keep every slot of the pool busy; an operator that speculates proposes from candidates
// still being judged, and what a verdict makes moot is cancelled (speculation.ts). The baseline (c0000) is judged
// first, with the speculating operators' drafts beside it; if it is not ok the run ends. Identical sources (by
// normalized hash) are judged once. The candidates and their scores live in the CandidateStore, generation and its
// budget in the ProposalScheduler, the last judging of the leaders in leaderConfirmation.ts. Every change is an
// EngineEvent; the run store, the CLI and the editor only listen.
import * as path from 'node:path';
import type { EvaluationJob, Evaluator, InputsMode } from '../contract/job';
import type { Candidate } from './candidate';
import { CandidateStore, isConfirmed } from './candidateStore';
import type { EngineEvent, EngineEventListener, RunError, RunSummary, TerminationReason } from './events';
import { fitness } from './fitness';
import { confirmLeaders, EarlyConfirmations } from './leaderConfirmation';
import type { Operator, ProposalBatch, ProposalContext } from './operator';
import { ProposalScheduler, type ProposalSink } from './proposalScheduler';
import { scoreInterval, scoreOf } from './pairedScore';
import { GreedyPolicy, type SelectionPolicy } from './selection';
import { languageOf, sourceHash, type SourceLanguage } from './sourceText';
import { isPending, mootChildren } from './speculation';
import { pastTrendCandidates } from './trend';
import type { KernelSpec } from './spec';
import { estimateRemainingS, SIGNIFICANT_GAIN, terminationReason, type TerminationLimits } from './termination';

/** The operators are asked for closing proposals again while the last round brought some, at most this often (the
 *  tuner: a table of each shape's fastest launch and one of the close runners-up, then the table rebuilt from both). */
const CLOSING_ROUNDS = 2;

export interface EvolutionOptions {
  runId: string;
  runDir: string;
  spec: KernelSpec;
  /** The kernel file as it stands: the baseline. */
  baselineSource: string;
  operators: Operator[];
  evaluator: Evaluator;
  /** The hardware the operators' knowledge follows when no host names one (a custom spec's toolchain names it). */
  hardware?: string;
  policy?: SelectionPolicy;
  limits: TerminationLimits;
  /** Proposals made without a parent before refinement starts (KernelEvolve's drafting phase). */
  draftBudget?: number;
  /** The share of the budget that candidates cancelled as moot may give back (default REFUND_SHARE). */
  refundShare?: number;
  /** Proposals being generated + candidates waiting + candidates being judged; default: the pool's slots. */
  pipelineDepth?: number;
  /** A stored run to continue: its candidates (judged or not) and the budget it already used. */
  resume?: { candidates: Candidate[]; used: number; duplicates?: number; invalid?: number };
  signal?: AbortSignal;
  jobTimeoutS?: number;
  profile?: boolean;
  /** The harness's `--inputs` (default `wide`). */
  inputs?: InputsMode;
  /** An operator that fails this many times in a row is dropped for the rest of the run. */
  maxOperatorFailures?: number;
  /** Leaders judged once more before the run ends (default 3; 0: none). At most one more is judged when an
   *  unconfirmed candidate still scores above every confirmed one. */
  confirmTop?: number;
  /** Starts the confirmation's first evaluations in the slots the search's last round (its closing proposal
   *  alone) leaves free (default true; false: they wait for the search to end). */
  confirmEarly?: boolean;
  /** Asks for the first closing round as soon as the operators have nothing more to propose, beside the evaluations
   *  still in flight (default true; false: once everything else is judged). */
  closeEarly?: boolean;
  /** A harder stop than `signal` (a second Ctrl-C): as `signal`, and the leaders are not judged again. */
  quit?: AbortSignal;
  /** Cancels the pending candidates a verdict places past a falling trend (trend.ts; default true). */
  pastTrend?: boolean;
}

export class EvolutionRun {
  private readonly store = new CandidateStore();
  private readonly scheduler: ProposalScheduler;
  private readonly listeners: EngineEventListener[] = [];
  private readonly evalQueue: Candidate[] = [];
  private readonly evaluationFailures = new Map<string, number>();
  private readonly evaluating = new Map<string, AbortController>();
  private readonly proposalControllers = new Set<AbortController>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly lang: SourceLanguage;
  private evaluatedThisSession = 0;
  private plateauRef = 0;
  private sinceImprovement = 0;
  private stopping = false;
  /** Closing rounds asked for so far (the operators' closing proposals, `Operator.conclude`). */
  private closingRounds = 0;
  /** The candidates the closing rounds proposed. */
  private readonly closingIds = new Set<string>();
  /** Proposals in flight and evaluations queued or running, at most (the scheduler's pipeline depth). */
  private readonly depth: number;
  /** Confirmations judged beside the closing proposal (leaderConfirmation.ts). */
  private readonly early: EarlyConfirmations;
  private error?: RunError;
  private startedAt = 0;
  private wake: () => void = () => undefined;
  private readonly sink: ProposalSink = {
    proposed: (c) => {
      this.adopt(c);
      this.evalQueue.push(c);
      this.emit({ type: 'candidate-proposed', candidate: c, at: Date.now() });
    },
    invalid: (invalid) => this.emit({ type: 'proposal-invalid', invalid, at: Date.now() }),
  };

  constructor(private readonly opts: EvolutionOptions) {
    this.lang = languageOf(opts.spec.sourcePath);
    this.early = new EarlyConfirmations({ judge: (c, n, signal) => this.judgeAgain(c, n, signal), quit: opts.quit, onSettled: () => this.wake() });
    const budget = opts.limits.budget;
    this.depth = Math.max(1, opts.pipelineDepth ?? opts.evaluator.totalSlots);
    this.scheduler = new ProposalScheduler({
      operators: opts.operators,
      policy: opts.policy ?? new GreedyPolicy(),
      store: this.store,
      lang: this.lang,
      depth: this.depth,
      draftBudget: opts.draftBudget ?? (budget !== undefined ? Math.min(budget, Math.max(3, Math.round(budget * 0.1))) : 4),
      budget,
      refundShare: opts.refundShare,
      maxOperatorFailures: opts.maxOperatorFailures ?? 3,
    });
    if (opts.resume) {
      for (const c of [...opts.resume.candidates].sort((a, b) => a.id.localeCompare(b.id))) this.adopt(c);
      const kept = this.candidates.filter((c) => c.state !== 'cancelled').length - 1;
      this.scheduler.resume({ ...opts.resume, used: Math.max(opts.resume.used, kept) });
    }
  }

  /** Every candidate so far, in creation order (the baseline first). */
  get candidates(): Candidate[] {
    return this.store.candidates;
  }

  on(listener: EngineEventListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private emit(e: EngineEvent): void {
    for (const l of this.listeners) l(e);
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    this.emit({ type: 'log', level, message, at: Date.now() });
  }

  private adopt(c: Candidate): void {
    this.store.add(c);
    if (c.state === 'cancelled') this.store.release(c);
    if (c.verdict) this.noteResult(c, false);
  }

  private get baseline(): Candidate | undefined {
    return this.store.baseline;
  }

  /** Runs to the end and resolves with the summary (never rejects for a candidate's or a host's fault). */
  async run(): Promise<RunSummary> {
    this.startedAt = Date.now();
    const onAbort = () => {
      this.stopping = true;
      this.wake();
    };
    if (this.opts.signal?.aborted || this.opts.quit?.aborted) this.stopping = true;
    this.opts.signal?.addEventListener('abort', onAbort, { once: true });
    this.opts.quit?.addEventListener('abort', onAbort, { once: true });
    this.emit({ type: 'run-started', runId: this.opts.runId, runDir: this.opts.runDir, specPath: this.opts.spec.specPath,
      kernel: this.opts.spec.kernel, resumed: !!this.opts.resume, at: Date.now() });
    let reason: TerminationReason;
    try {
      reason = await this.judgeBaseline();
      if (reason === 'budget') reason = await this.loop();
    } finally {
      this.opts.signal?.removeEventListener('abort', onAbort);
      this.opts.quit?.removeEventListener('abort', onAbort);
    }
    // stopped by the user, or by the run itself (cancelInFlight stops what is in flight after an error)
    const stoppedByUser = this.stopping;
    await this.cancelInFlight();
    if (this.error) reason = stoppedByUser ? 'stopped' : 'error';
    if (reason !== 'error' && !this.error) await this.confirmLeaders();
    else this.early.abort();
    this.store.settleBest();
    const summary = this.summary();
    this.emitProgress();
    this.emit({ type: 'run-finished', reason, summary, at: Date.now(), ...(this.error && reason === 'error' ? { error: this.error } : {}) });
    return summary;
  }

  summary(): RunSummary {
    const b = this.store.best;
    return {
      runId: this.opts.runId,
      runDir: this.opts.runDir,
      candidates: this.candidates.length,
      baseline: this.baseline?.verdict,
      best: b?.verdict ? {
        id: b.id, speedup: scoreOf(b), ...(scoreInterval(b) ? { interval: scoreInterval(b) } : {}),
        operator: b.operator, status: b.verdict.status, confirmed: isConfirmed(b),
      } : undefined,
    };
  }

  /** Judges c0000 against itself. Returns 'budget' to mean "go on", or why the run ends here. */
  private async judgeBaseline(): Promise<TerminationReason> {
    if (!this.baseline) {
      const c: Candidate = {
        id: this.store.nextId(),
        parents: [],
        operator: 'baseline',
        source: this.opts.baselineSource,
        hash: sourceHash(this.opts.baselineSource, this.lang),
        state: 'queued',
        rationale: 'the kernel as it stands',
        timings: { proposedAt: Date.now() },
      };
      this.adopt(c);
      this.emit({ type: 'candidate-proposed', candidate: c, at: Date.now() });
    }
    const base = this.baseline!;
    if (!base.verdict) {
      if (this.stopping) return 'stopped';
      // the units kept for the closing proposals are set aside before drafts may spend them
      this.scheduler.holdForClosing();
      await this.besideBaseline(base);
      if (this.stopping) return 'stopped';
      if (this.error) return 'error';
    }
    if (fitness(base.verdict) <= 0) {
      this.error = {
        kind: 'baseline',
        message: `The baseline itself is ${base.verdict!.status}: ${base.verdict!.reason} Fix the kernel or its spec so that \`kernelevolve evaluate\` passes on the original source, then start again.`,
      };
      return 'error';
    }
    for (const c of this.candidates) {
      if (!c.verdict && c !== base && c.state !== 'cancelled' && !this.evaluating.has(c.id) && !this.evalQueue.includes(c)) this.evalQueue.push(c);
    }
    if ((base.verdict?.shapes?.length ?? 0) >= 2) this.scheduler.holdForClosing();
    else this.scheduler.releaseClosing();
    this.emitProgress();
    return 'budget';
  }

  /**
   * Judges the baseline; meanwhile the operators that speculate (the tuner) draft beside it, and their drafts are
   * judged on the slots it leaves free. A draft needs the baseline's source, not its verdict (a baseline judged
   * against itself scores 1 by construction: speculation.ts estimates it so), and each evaluation times its
   * candidate against the baseline side by side, so no verdict waits for the baseline's. An operator that reads
   * verdicts (the LLM's profiles and timings) waits for it. If the baseline is not ok, what started beside it is
   * stopped with the run.
   */
  private async besideBaseline(base: Candidate): Promise<void> {
    const judged = this.evaluate(base);
    this.track(judged);
    while (!base.verdict && !this.error && !this.stopping && this.evaluating.has(base.id)) {
      if (!this.termination()) this.startProposals((op) => !!op.speculates);
      this.startEvaluations();
      await this.waitForChange();
    }
    await judged;
  }

  private async loop(): Promise<TerminationReason> {
    for (;;) {
      if (this.error) return 'error';
      const reason = this.termination();
      if (reason && reason !== 'budget') return reason;
      this.startEvaluations();
      const proposed = reason ? false : this.startProposals();
      this.startEvaluations();
      const idle = this.evaluating.size === 0 && this.scheduler.proposing === 0 && this.evalQueue.length === 0;
      if (idle) {
        if (this.closingRounds < CLOSING_ROUNDS && !this.stopping) {
          this.closingRounds++;
          if (await this.conclude()) continue;
          this.closingRounds = CLOSING_ROUNDS; // nothing more to close with
          // the unit kept for a closing proposal that did not come goes back to the search (a held-out log-softmax's
          // run of budget 14 ended with 13 spent: its shapes agreed, so no table was proposed)
          if (!this.stopping && !this.termination() && this.startProposals()) continue;
        }
        if (reason === 'budget' || this.scheduler.spent) return 'budget';
        if (!proposed) return 'exhausted';
      } else if (!reason && !proposed && this.drained()) {
        // The operators have nothing more to propose while the last evaluations are judged (a search that used up
        // its settings ends on its slowest: on an H100 the softmax example's slots emptied over 3.6 s, and its two
        // closing rounds took 7.6 s after that): the first closing round is proposed now, from what is judged,
        // beside them. The second, at idle, rebuilds the table from every verdict.
        this.closingRounds++;
        await this.conclude();
        continue;
      }
      if (this.closingRounds > 0 && this.opts.confirmEarly !== false) this.startEarly();
      await this.waitForChange();
    }
  }

  private get state() {
    const best = this.store.best;
    return {
      used: this.scheduler.used,
      elapsedS: (Date.now() - this.startedAt) / 1000,
      evaluationsSinceImprovement: this.sinceImprovement,
      bestSpeedup: best ? scoreOf(best) : 0,
      stopped: this.stopping,
    };
  }

  private termination(): TerminationReason | undefined {
    return terminationReason(this.opts.limits, this.state);
  }

  private waitForChange(): Promise<void> {
    const { timeS } = this.opts.limits;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      this.wake = () => {
        clearTimeout(timer);
        this.wake = () => undefined;
        resolve();
      };
      if (timeS !== undefined) {
        const left = timeS * 1000 - (Date.now() - this.startedAt);
        timer = setTimeout(() => this.wake(), Math.max(0, left) + 5);
      }
    });
  }

  private track<T>(p: Promise<T>): void {
    const tracked = p.finally(() => {
      this.inFlight.delete(tracked);
      this.wake();
    });
    this.inFlight.add(tracked);
    tracked.catch(() => undefined);
  }

  private async cancelInFlight(): Promise<void> {
    for (const c of this.evaluating.values()) c.abort();
    for (const c of this.proposalControllers) c.abort();
    this.stopping = this.stopping || this.inFlight.size > 0;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  // ------------------------------------------------------------- evaluation queue

  private startEvaluations(): void {
    while (this.evaluating.size + this.early.running < this.opts.evaluator.totalSlots && this.evalQueue.length && !this.stopping) {
      this.track(this.evaluate(this.evalQueue.shift()!));
    }
  }

  private jobOf(c: Candidate): EvaluationJob {
    return {
      id: c.id,
      specPath: this.opts.spec.specPath,
      baselinePath: this.opts.spec.sourcePath,
      candidateSource: c.source,
      candidateFileName: path.basename(this.opts.spec.sourcePath),
      profile: this.opts.profile,
      ...(this.opts.inputs === 'problem' ? { inputs: 'problem' as const } : {}),
      timeoutS: this.opts.jobTimeoutS,
    };
  }

  private async evaluate(c: Candidate): Promise<void> {
    const controller = new AbortController();
    this.evaluating.set(c.id, controller);
    const job = this.jobOf(c);
    try {
      const result = await this.opts.evaluator.evaluate(job, {
        signal: controller.signal,
        onStart: (host) => {
          c.state = 'evaluating';
          c.timings.startedAt = Date.now();
          this.emit({ type: 'candidate-started', id: c.id, host, at: Date.now() });
        },
      });
      if (c.state === 'cancelled') return; // made moot while it was judged: the verdict no longer counts
      const { placement, ...verdict } = result;
      c.placement = placement ?? (verdict.host ? { host: verdict.host } : undefined);
      c.state = 'done';
      c.timings.finishedAt = Date.now();
      this.evaluatedThisSession++;
      this.store.judged(c, verdict);
      this.emit({ type: 'candidate-evaluated', candidate: c, at: Date.now() });
      this.noteResult(c, true);
      this.cancelMoot(c);
      this.emitProgress();
    } catch (e) {
      if (c.state === 'cancelled') return; // stopped because its parent's verdict made it moot
      // not judged: it stays queued in the store, and a resumed run judges it
      c.state = 'queued';
      if (!this.stopping && !controller.signal.aborted) {
        const failures = (this.evaluationFailures.get(c.id) ?? 0) + 1;
        this.evaluationFailures.set(c.id, failures);
        if (failures < 2 && c !== this.baseline) {
          // a harness or host hiccup is not the candidate's fault: once more before giving up
          this.log('warn', `Candidate ${c.id} could not be evaluated (${(e as Error).message.split('\n')[0]}); trying again.`);
          this.evalQueue.unshift(c);
        } else {
          this.error ??= { kind: 'host', candidate: c.id, message: `Candidate ${c.id} could not be evaluated: ${(e as Error).message}` };
          this.log('error', this.error.message);
        }
      }
    } finally {
      this.evaluating.delete(c.id);
    }
  }

  /** Cancels the speculative children that `judged`'s verdict made moot, and the pending candidates it placed past
   *  a falling trend: off the queue, or their evaluation stopped (its slot and the device's timing lock go to the
   *  rest of the wave). Their budget units are given back up to the scheduler's refund share (speculation.ts). */
  private cancelMoot(judged: Candidate): void {
    for (const { candidate: c, reason } of mootChildren(judged, this.candidates)) this.cancel(c, reason);
    // and what lies past a falling trend the verdict completed (trend.ts)
    if (this.opts.pastTrend === false) return;
    const pending = this.candidates.filter((c) => isPending(c) && c !== this.baseline);
    for (const { candidate: c, reason } of pastTrendCandidates(pending, this.candidates)) this.cancel(c, reason);
  }

  private cancel(c: Candidate, reason: string): void {
    const queued = this.evalQueue.indexOf(c);
    if (queued >= 0) this.evalQueue.splice(queued, 1);
    c.state = 'cancelled';
    c.cancelled = reason;
    this.store.release(c);
    this.evaluating.get(c.id)?.abort(new Error(`cancelled: ${reason}`));
    this.scheduler.cancelled++;
    const refunded = this.scheduler.refund();
    this.log('info', `Cancelled ${c.id}: ${reason}${refunded ? ' (its budget unit given back)' : ''}.`);
    this.emit({ type: 'candidate-cancelled', candidate: c, at: Date.now() });
  }

  /** Nothing is proposed or queued, a slot is free and budget is left, yet the operators proposed nothing (the
   *  scheduler would have let them): only the evaluations in flight remain, and no closing round was asked. */
  private drained(): boolean {
    return this.opts.closeEarly !== false && this.closingRounds === 0 && !this.stopping && this.scheduler.proposing === 0
      && this.evalQueue.length === 0 && this.evaluating.size > 0 && this.evaluating.size < this.depth
      && this.scheduler.budgetLeft() > 0 && this.scheduler.concluding.length > 0;
  }

  /** The search's last round is the closing proposal alone: the slots it leaves free judge again what the
   *  confirmation would judge first (EarlyConfirmations). */
  private startEarly(): void {
    if (this.stopping || this.evalQueue.length || this.scheduler.proposing || !this.evaluating.size) return;
    const closing = this.candidates.filter((c) => this.evaluating.has(c.id) && this.closingIds.has(c.id));
    const free = this.opts.evaluator.totalSlots - this.evaluating.size - this.early.running;
    if (free > 0) this.early.start(this.store, this.opts.confirmTop ?? 3, closing, free);
  }

  /** Judges `c` once more: its `n`th confirmation, or an evaluation named `n` (a figure judged ahead). */
  private async judgeAgain(c: Candidate, n: number | string, signal: AbortSignal) {
    // in the background: the search's own evaluations (a closing table, the last candidates) take the timing lock
    // first, as these are judged in the slots they leave free
    const job = { ...this.jobOf(c), id: typeof n === 'number' ? `${c.id}-confirm${n}` : `${c.id}-${n}`, background: true };
    const { placement: _placement, ...confirmation } = await this.opts.evaluator.evaluate(job, { signal });
    return confirmation;
  }

  private confirmLeaders(): Promise<void> {
    return confirmLeaders({
      store: this.store,
      top: this.opts.confirmTop ?? 3,
      quit: this.opts.quit,
      slots: this.opts.evaluator.totalSlots,
      judge: (c, n, signal) => this.judgeAgain(c, n, signal),
      early: this.early,
      onConfirmed: (c, confirmation) => this.emit({ type: 'candidate-confirmed', candidate: c, confirmation, at: Date.now() }),
      log: (level, message) => this.log(level, message),
    });
  }

  /** The best so far, and the plateau: this session's evaluations since the last significant gain. */
  private noteResult(c: Candidate, live: boolean): void {
    const f = scoreOf(c);
    if (this.store.considerBest(c) && live && f > 0 && c.operator !== 'baseline') {
      this.emit({ type: 'best-improved', id: c.id, speedup: f, at: Date.now() });
    }
    if (!live || c.operator === 'baseline') {
      this.plateauRef = Math.max(this.plateauRef, f);
    } else if (f > this.plateauRef * (1 + SIGNIFICANT_GAIN)) {
      this.plateauRef = f;
      this.sinceImprovement = 0;
    } else {
      this.sinceImprovement++;
    }
  }

  private emitProgress(): void {
    const best = this.store.best;
    this.emit({
      type: 'progress',
      evaluated: this.candidates.filter((c) => c.verdict).length,
      budget: this.opts.limits.budget,
      best: best ? scoreOf(best) : 0,
      ...(best ? { bestId: best.id } : {}),
      etaS: estimateRemainingS(this.opts.limits, this.state, this.evaluatedThisSession),
      at: Date.now(),
      used: this.scheduler.used,
      inFlight: this.evaluating.size + this.evalQueue.length,
      duplicates: this.scheduler.duplicates,
      invalid: this.scheduler.invalid,
      cancelled: this.scheduler.cancelled,
    });
  }

  // ------------------------------------------------------------- generation queue

  /** Starts as many proposals as the pipeline and budget allow; true when at least one started. */
  private startProposals(only?: (op: Operator) => boolean): boolean {
    let started = false;
    while (!this.stopping) {
      const pick = this.scheduler.next(this.evalQueue.length + this.evaluating.size, only);
      if (!pick) break;
      this.launch(pick.op, pick.parent);
      started = true;
    }
    return started;
  }

  private context(parent: Candidate | undefined): ProposalContext {
    return {
      spec: this.opts.spec,
      baselineSource: this.opts.baselineSource,
      candidates: this.candidates,
      parent,
      hardware: this.opts.evaluator.hardware ?? this.opts.hardware,
      seen: this.store.seen,
      concludes: this.scheduler.holdsClosing,
    };
  }

  /** Asks the operators for their closing proposals (once everything else is judged); true when one came. */
  private async conclude(): Promise<boolean> {
    this.scheduler.openClosing();
    let proposed = false;
    for (const op of this.scheduler.concluding) {
      if (this.scheduler.budgetLeft() <= 0 || this.stopping) break;
      const controller = new AbortController();
      this.proposalControllers.add(controller);
      try {
        const batch = await op.conclude!(this.context(undefined), controller.signal);
        if (!batch.proposals.length || this.stopping) continue;
        const before = this.evalQueue.length;
        const known = this.candidates.length;
        this.scheduler.accept(op, undefined, batch, this.sink);
        for (const c of this.candidates.slice(known)) this.closingIds.add(c.id);
        proposed ||= this.evalQueue.length > before;
      } catch (e) {
        this.log('warn', `The ${op.name} operator's closing proposal failed (${(e as Error).message}); the run ends without it.`);
      } finally {
        this.proposalControllers.delete(controller);
      }
    }
    return proposed;
  }

  private launch(op: Operator, parent: Candidate | undefined): void {
    const speculative = !!parent && isPending(parent);
    this.scheduler.begin(op, parent);
    const controller = new AbortController();
    this.proposalControllers.add(controller);
    const ctx = this.context(parent);
    const done = () => {
      this.scheduler.end(op);
      this.proposalControllers.delete(controller);
    };
    this.track(Promise.resolve()
      .then(() => op.propose(ctx, controller.signal))
      .then(
        (batch) => {
          done();
          this.accept(op, parent, batch, speculative);
        },
        (e: unknown) => {
          done();
          this.operatorFailed(op, e as Error);
        },
      ));
  }

  private accept(op: Operator, parent: Candidate | undefined, batch: ProposalBatch, speculative: boolean): void {
    if (this.stopping) return; // answers that arrive after a stop are dropped, not judged
    if (batch.usage) this.emit({ type: 'usage', ...batch.usage, at: Date.now() });
    this.scheduler.accept(op, parent, batch, this.sink, speculative);
    // the parent's verdict came in while the proposal was being made
    if (speculative && parent?.state === 'done') this.cancelMoot(parent);
  }

  private operatorFailed(op: Operator, e: Error): void {
    if (this.stopping) return;
    const { inARow, dropped, allDropped } = this.scheduler.failed(op, e, this.sink);
    if (dropped) {
      this.log('error', `The ${op.name} operator failed ${inARow} times in a row (last: ${e.message}); the run goes on without it.`);
      if (allDropped) this.error ??= { kind: 'operator', message: `Every operator failed ${inARow} times in a row; last error: ${e.message}` };
    }
  }
}
