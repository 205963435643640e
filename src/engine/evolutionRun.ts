// One evolution run: a graph of candidates grown by operators and judged by hosts. Generation and evaluation
// are separate queues: operators propose while hosts evaluate, with enough proposals in flight to keep every
// slot of the pool busy. The baseline (c0000) is judged first; its verdict is the reference. Identical
// sources (by normalized hash) are judged once. Every change is an EngineEvent; the run store, the CLI and
// the editor only listen.
import * as path from 'node:path';
import type { EvaluationJob, Evaluator } from '../contract/job';
import type { Candidate } from './candidate';
import type { EngineEvent, EngineEventListener, RunSummary, TerminationReason } from './events';
import type { Operator, ProposalBatch, ProposalContext } from './operator';
import { GreedyPolicy, type SelectionPolicy, type SelectionView } from './selection';
import { languageOf, sourceHash, type SourceLanguage } from './sourceText';
import type { KernelSpec } from './spec';
import { estimateRemainingS, SIGNIFICANT_GAIN, terminationReason, type TerminationLimits } from './termination';
import { outranks, pairedScore, scoreInterval, scoreOf } from './pairedScore';
import { fitness } from './fitness';

export interface EvolutionOptions {
  runId: string;
  runDir: string;
  spec: KernelSpec;
  /** The kernel file as it stands: the baseline. */
  baselineSource: string;
  operators: Operator[];
  evaluator: Evaluator;
  policy?: SelectionPolicy;
  limits: TerminationLimits;
  /** Proposals made without a parent before refinement starts (KernelEvolve's drafting phase). */
  draftBudget?: number;
  /** Proposals being generated + candidates waiting + candidates being judged; default: the pool's slots. */
  pipelineDepth?: number;
  /** A stored run to continue: its candidates (judged or not) and the budget it already used. */
  resume?: { candidates: Candidate[]; used: number; duplicates?: number; invalid?: number };
  signal?: AbortSignal;
  jobTimeoutS?: number;
  profile?: boolean;
  /** An operator that fails this many times in a row is dropped for the rest of the run. */
  maxOperatorFailures?: number;
  /** Leaders judged once more before the run ends (default 3; 0: none). At most one more is judged when an
   *  unconfirmed candidate still scores above every confirmed one. */
  confirmTop?: number;
  /** A harder stop than `signal` (a second Ctrl-C): as `signal`, and the leaders are not judged again. */
  quit?: AbortSignal;
}

interface RunError {
  kind: 'host' | 'baseline' | 'operator';
  message: string;
}

export function candidateId(n: number): string {
  return `c${String(n).padStart(4, '0')}`;
}

/** Judged again at the end and correct both times. */
export function isConfirmed(c: Candidate): boolean {
  return !!c.confirmations?.length && scoreOf(c) > 0;
}

export class EvolutionRun {
  readonly candidates: Candidate[] = [];
  private readonly listeners: EngineEventListener[] = [];
  private readonly byHash = new Map<string, string>();
  private readonly seen = new Set<string>();
  private readonly exhausted = new Set<string>();
  private readonly draftsDone = new Set<string>();
  private readonly disabled = new Set<string>();
  private readonly failuresInARow = new Map<string, number>();
  private readonly expansionCount = new Map<string, number>();
  private readonly proposingPerOp = new Map<string, number>();
  private readonly evalQueue: Candidate[] = [];
  private readonly evaluationFailures = new Map<string, number>();
  private readonly evaluating = new Map<string, AbortController>();
  private readonly proposalControllers = new Set<AbortController>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly lang: SourceLanguage;
  private readonly policy: SelectionPolicy;
  private readonly depth: number;
  private readonly draftBudget: number;
  private nextId = 0;
  private used = 0;
  private reserved = 0;
  private proposing = 0;
  private duplicates = 0;
  private invalidCount = 0;
  private draftsUsed = 0;
  private evaluatedThisSession = 0;
  private turn = 0;
  private best?: Candidate;
  private plateauRef = 0;
  private sinceImprovement = 0;
  private stopping = false;
  private error?: RunError;
  private startedAt = 0;
  private wake: () => void = () => undefined;

  constructor(private readonly opts: EvolutionOptions) {
    this.lang = languageOf(opts.spec.sourcePath);
    this.policy = opts.policy ?? new GreedyPolicy();
    this.depth = Math.max(1, opts.pipelineDepth ?? opts.evaluator.totalSlots);
    const budget = opts.limits.budget;
    this.draftBudget = opts.draftBudget ?? (budget !== undefined ? Math.min(budget, Math.max(3, Math.round(budget * 0.1))) : 4);
    if (opts.resume) {
      for (const c of [...opts.resume.candidates].sort((a, b) => a.id.localeCompare(b.id))) this.adopt(c);
      this.used = Math.max(opts.resume.used, this.candidates.length - 1);
      this.duplicates = opts.resume.duplicates ?? 0;
      this.invalidCount = opts.resume.invalid ?? 0;
      this.draftsUsed = this.candidates.filter((c) => c.mode === 'draft').length;
    }
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
    this.candidates.push(c);
    this.byHash.set(c.hash, c.id);
    this.seen.add(c.hash);
    this.nextId = Math.max(this.nextId, Number(c.id.slice(1)) + 1);
    if (c.verdict) {
      this.rescore(c);
      this.noteResult(c, false);
    }
  }

  private get baseline(): Candidate | undefined {
    return this.candidates[0];
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
    await this.cancelInFlight();
    if (this.error) reason = this.stopping ? 'stopped' : 'error';
    if (reason !== 'error' && !this.error) await this.confirmLeaders();
    this.settleBest();
    const summary = this.summary();
    this.emitProgress();
    this.emit({ type: 'run-finished', reason, summary, at: Date.now(), ...(this.error && reason === 'error' ? { error: this.error } : {}) });
    return summary;
  }

  summary(): RunSummary {
    const b = this.best;
    return {
      runId: this.opts.runId,
      runDir: this.opts.runDir,
      candidates: this.candidates.length,
      baseline: this.baseline?.verdict,
      best: b?.verdict ? { id: b.id, speedup: scoreOf(b), ...(scoreInterval(b) ? { interval: scoreInterval(b) } : {}), operator: b.operator, status: b.verdict.status, confirmed: isConfirmed(b) } : undefined,
    };
  }

  /** Judges c0000 against itself. Returns 'budget' to mean "go on", or why the run ends here. */
  private async judgeBaseline(): Promise<TerminationReason> {
    if (!this.baseline) {
      const c: Candidate = {
        id: candidateId(this.nextId),
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
      await this.evaluate(base);
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
    for (const c of this.candidates) if (!c.verdict && c !== base) this.evalQueue.push(c);
    this.emitProgress();
    return 'budget';
  }

  private async loop(): Promise<TerminationReason> {
    for (;;) {
      if (this.error) return 'error';
      const reason = this.termination();
      if (reason && reason !== 'budget') return reason;
      this.startEvaluations();
      const proposed = reason ? false : this.startProposals();
      this.startEvaluations();
      const idle = this.evaluating.size === 0 && this.proposing === 0 && this.evalQueue.length === 0;
      if (idle) {
        if (reason === 'budget') return 'budget';
        if (!proposed) return 'exhausted';
      }
      await this.waitForChange();
    }
  }

  private termination(): TerminationReason | undefined {
    return terminationReason(this.opts.limits, {
      used: this.used,
      elapsedS: (Date.now() - this.startedAt) / 1000,
      evaluationsSinceImprovement: this.sinceImprovement,
      bestSpeedup: this.best ? scoreOf(this.best) : 0,
      stopped: this.stopping,
    });
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
    while (this.evaluating.size < this.opts.evaluator.totalSlots && this.evalQueue.length && !this.stopping) {
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
      const { placement, ...verdict } = result;
      c.verdict = verdict;
      c.placement = placement ?? (verdict.host ? { host: verdict.host } : undefined);
      c.state = 'done';
      c.timings.finishedAt = Date.now();
      this.evaluatedThisSession++;
      this.rescore(c);
      this.emit({ type: 'candidate-evaluated', candidate: c, at: Date.now() });
      this.noteResult(c, true);
      this.emitProgress();
    } catch (e) {
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
          this.error ??= { kind: 'host', message: `Candidate ${c.id} could not be evaluated: ${(e as Error).message}` };
          this.log('error', this.error.message);
        }
      }
    } finally {
      this.evaluating.delete(c.id);
    }
  }

  /** The candidate's score: its paired speedup (the lowest over its evaluations, pairedScore.ts). */
  private rescore(c: Candidate): void {
    c.score = pairedScore(c);
  }

  // ------------------------------------------------------------- confirmation of the leaders

  /**
   * The winner's curse: the top of many noisy measurements is biased upward, so the leaders are judged once
   * more on the run's hosts and keep the lower of their figures; one that is not ok the second time (it is
   * nondeterministic) loses its place. Not counted against the budget; at most confirmTop + 1 evaluations.
   */
  private async confirmLeaders(): Promise<void> {
    const top = this.opts.confirmTop ?? 3;
    const base = this.baseline;
    if (top <= 0 || !base?.verdict || this.opts.quit?.aborted) return;
    const limit = top + 1;
    let judged = 0;
    while (judged < limit && !this.opts.quit?.aborted) {
      const confirmed = this.candidates.filter((c) => c !== base && isConfirmed(c));
      const waiting = this.candidates
        .filter((c) => c !== base && c.state === 'done' && !c.confirmations?.length && scoreOf(c) > scoreOf(base))
        .sort((a, b) => scoreOf(b) - scoreOf(a));
      if (!waiting.length) break;
      let batch: Candidate[];
      if (confirmed.length < top) batch = waiting.slice(0, Math.min(top - confirmed.length, limit - judged));
      else if (scoreOf(waiting[0]) > Math.max(...confirmed.map((c) => scoreOf(c)))) batch = [waiting[0]];
      else break;
      this.log('info', `Judging ${batch.map((c) => `${c.id} (${scoreOf(c).toFixed(2)}x)`).join(', ')} once more to confirm ${batch.length === 1 ? 'its' : 'their'} speedup.`);
      judged += batch.length;
      await Promise.all(batch.map((c) => this.confirm(c)));
    }
  }

  private async confirm(c: Candidate): Promise<void> {
    const controller = new AbortController();
    const onQuit = () => controller.abort();
    this.opts.quit?.addEventListener('abort', onQuit, { once: true });
    const n = (c.confirmations?.length ?? 0) + 1;
    const first = scoreOf(c);
    try {
      const { placement: _placement, ...confirmation } = await this.opts.evaluator.evaluate({ ...this.jobOf(c), id: `${c.id}-confirm${n}` }, { signal: controller.signal });
      c.confirmations = [...(c.confirmations ?? []), confirmation];
      this.rescore(c);
      this.emit({ type: 'candidate-confirmed', candidate: c, confirmation, at: Date.now() });
      if (confirmation.status !== 'ok') {
        this.log('warn', `${c.id} lost its place: judged again it is ${confirmation.status} (${confirmation.reason}); its first ${first.toFixed(2)}x was not reproducible.`);
      }
    } catch (e) {
      if (!controller.signal.aborted) this.log('warn', `${c.id} could not be judged again (${(e as Error).message.split('\n')[0]}); its single measurement stands.`);
    } finally {
      this.opts.quit?.removeEventListener('abort', onQuit);
    }
  }

  /** The run's best: the top confirmed candidate when there is one (else the top score), or the baseline if it scores higher. */
  private settleBest(): void {
    const judged = this.candidates.filter((c) => c.verdict);
    const confirmed = judged.filter(isConfirmed);
    const pool = confirmed.length ? [...confirmed, ...(this.baseline?.verdict ? [this.baseline] : [])] : judged;
    let best: Candidate | undefined;
    for (const c of pool) if (!best || outranks(c, best)) best = c;
    this.best = best ?? this.best;
  }

  private noteResult(c: Candidate, live: boolean): void {
    const f = scoreOf(c);
    if (!this.best || outranks(c, this.best)) {
      this.best = c;
      if (live && f > 0 && c.operator !== 'baseline') this.emit({ type: 'best-improved', id: c.id, speedup: f, at: Date.now() });
    }
    // the plateau counts this session's evaluations since the last significant gain
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
    const s = {
      used: this.used,
      elapsedS: (Date.now() - this.startedAt) / 1000,
      evaluationsSinceImprovement: this.sinceImprovement,
      bestSpeedup: this.best ? scoreOf(this.best) : 0,
      stopped: this.stopping,
    };
    this.emit({
      type: 'progress',
      evaluated: this.candidates.filter((c) => c.verdict).length,
      budget: this.opts.limits.budget,
      best: this.best ? scoreOf(this.best) : 0,
      ...(this.best ? { bestId: this.best.id } : {}),
      etaS: estimateRemainingS(this.opts.limits, s, this.evaluatedThisSession),
      at: Date.now(),
      used: this.used,
      inFlight: this.evaluating.size + this.evalQueue.length,
      duplicates: this.duplicates,
      invalid: this.invalidCount,
    });
  }

  // ------------------------------------------------------------- generation queue

  private budgetLeft(): number {
    const { budget } = this.opts.limits;
    return budget === undefined ? Infinity : budget - this.used - this.reserved;
  }

  private get view(): SelectionView {
    return {
      candidates: this.candidates,
      isExhausted: (op, id) => this.exhausted.has(`${op}\u0000${id}`),
      expansions: (id) => this.expansionCount.get(id) ?? 0,
    };
  }

  /** Starts as many proposals as the pipeline and budget allow; true when at least one started. */
  private startProposals(): boolean {
    let started = false;
    while (!this.stopping && this.budgetLeft() > 0 && this.proposing + this.evalQueue.length + this.evaluating.size < this.depth) {
      const pick = this.pickOperator();
      if (!pick) break;
      this.launch(pick.op, pick.parent);
      started = true;
    }
    return started;
  }

  /** Operators take turns; each drafts (no parent) until the drafting budget is spent, then refines the policy's pick. */
  private pickOperator(): { op: Operator; parent?: Candidate } | undefined {
    const ops = this.opts.operators;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[(this.turn + i) % ops.length];
      if (this.disabled.has(op.name) || (this.proposingPerOp.get(op.name) ?? 0) >= Math.min(this.depth, op.concurrency ?? Infinity)) continue;
      if (this.draftsUsed < this.draftBudget && !this.draftsDone.has(op.name)) {
        this.turn = (this.turn + i + 1) % ops.length;
        return { op };
      }
      const parent = this.policy.select(this.view, { operator: op.name, repairs: op.repairs });
      if (parent) {
        this.turn = (this.turn + i + 1) % ops.length;
        return { op, parent };
      }
    }
    return undefined;
  }

  private launch(op: Operator, parent: Candidate | undefined): void {
    this.reserved++;
    this.proposing++;
    this.proposingPerOp.set(op.name, (this.proposingPerOp.get(op.name) ?? 0) + 1);
    if (parent) this.expansionCount.set(parent.id, (this.expansionCount.get(parent.id) ?? 0) + 1);
    const controller = new AbortController();
    this.proposalControllers.add(controller);
    const ctx: ProposalContext = {
      spec: this.opts.spec,
      baselineSource: this.opts.baselineSource,
      candidates: this.candidates,
      parent,
      hardware: this.opts.evaluator.hardware,
      seen: this.seen,
    };
    const done = () => {
      this.reserved--;
      this.proposing--;
      this.proposingPerOp.set(op.name, (this.proposingPerOp.get(op.name) ?? 1) - 1);
      this.proposalControllers.delete(controller);
    };
    this.track(Promise.resolve()
      .then(() => op.propose(ctx, controller.signal))
      .then(
        (batch) => {
          done();
          this.accept(op, parent, batch);
        },
        (e: unknown) => {
          done();
          this.operatorFailed(op, e as Error);
        },
      ));
  }

  private accept(op: Operator, parent: Candidate | undefined, batch: ProposalBatch): void {
    if (this.stopping) return; // answers that arrive after a stop are dropped, not judged
    if (batch.usage) this.emit({ type: 'usage', ...batch.usage, at: Date.now() });
    let left = this.opts.limits.budget === undefined ? Infinity : this.opts.limits.budget - this.used - this.reserved;
    let units = 0;
    for (const invalid of batch.invalid ?? []) {
      if (left <= 0) break;
      left--;
      units++;
      this.invalidCount++;
      this.emit({ type: 'proposal-invalid', invalid, at: Date.now() });
    }
    for (const p of batch.proposals) {
      if (left <= 0) break;
      left--;
      units++;
      const hash = sourceHash(p.source, this.lang);
      const twin = this.byHash.get(hash);
      if (twin) {
        this.duplicates++;
        this.emit({ type: 'proposal-invalid', invalid: { operator: p.operator || op.name, reason: `the same program as ${twin}; not evaluated again` }, at: Date.now() });
        continue;
      }
      const c: Candidate = {
        id: candidateId(this.nextId),
        parents: p.parents.length ? p.parents : parent ? [parent.id] : [],
        operator: p.operator || op.name,
        mode: p.mode ?? (parent ? 'improve' : 'draft'),
        source: p.source,
        hash,
        state: 'queued',
        rationale: p.rationale,
        knobs: p.knobs,
        timings: { proposedAt: Date.now() },
      };
      this.adopt(c);
      this.evalQueue.push(c);
      this.emit({ type: 'candidate-proposed', candidate: c, at: Date.now() });
    }
    const empty = !batch.proposals.length && !batch.invalid?.length;
    if (batch.exhausted) {
      if (parent) this.exhausted.add(`${op.name}\u0000${parent.id}`);
      else this.draftsDone.add(op.name);
    }
    // an empty answer that does not admit exhaustion still costs one unit, so a silent operator ends the run
    if (empty && !batch.exhausted && left > 0) units = 1;
    this.used += units;
    if (!parent) this.draftsUsed += units;
    this.failuresInARow.set(op.name, 0);
  }

  private operatorFailed(op: Operator, e: Error): void {
    if (this.stopping) return;
    if (this.budgetLeft() > 0) this.used++;
    this.invalidCount++;
    this.emit({ type: 'proposal-invalid', invalid: { operator: op.name, reason: `the operator failed: ${e.message}` }, at: Date.now() });
    const n = (this.failuresInARow.get(op.name) ?? 0) + 1;
    this.failuresInARow.set(op.name, n);
    if (n >= (this.opts.maxOperatorFailures ?? 3)) {
      this.disabled.add(op.name);
      this.log('error', `The ${op.name} operator failed ${n} times in a row (last: ${e.message}); the run goes on without it.`);
      if (this.opts.operators.every((o) => this.disabled.has(o.name))) {
        this.error ??= { kind: 'operator', message: `Every operator failed ${n} times in a row; last error: ${e.message}` };
      }
    }
  }
}
