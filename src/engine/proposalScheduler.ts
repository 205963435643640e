// Generation and its budget: which operator proposes next and from which parent (drafts first, then the
// selection policy's pick), how many proposals are in flight, what each answer costs, and which operators
// are dropped after failing again and again. An operator that speculates may be handed a pending candidate as
// its parent (speculation.ts). Evaluation is the run's other queue (evolutionRun.ts).
import type { Candidate } from './candidate';
import type { CandidateStore } from './candidateStore';
import type { InvalidProposal, Operator, ProposalBatch } from './operator';
import type { SelectionPolicy, SelectionView } from './selection';
import { speculativeParent } from './speculation';
import { sourceHash, type SourceLanguage } from './sourceText';

/** The share of a run's budget that candidates cancelled as moot may give back (speculation.ts says why). */
export const REFUND_SHARE = 0.25;

export interface SchedulerOptions {
  operators: Operator[];
  policy: SelectionPolicy;
  store: CandidateStore;
  lang: SourceLanguage;
  /** Proposals being generated + candidates waiting + candidates being judged. */
  depth: number;
  /** Proposals made without a parent before refinement starts. */
  draftBudget: number;
  /** Budget units for the whole run (undefined: no limit). */
  budget?: number;
  /** The share of the budget that candidates cancelled as moot may give back (default REFUND_SHARE). */
  refundShare?: number;
  /** An operator that fails this many times in a row is dropped. */
  maxOperatorFailures: number;
}

/** Where the scheduler's outcomes go, in the order they happen. */
export interface ProposalSink {
  proposed(c: Candidate): void;
  invalid(invalid: InvalidProposal): void;
}

export class ProposalScheduler {
  /** Budget units used: every proposal (new, duplicate, cancelled as moot and not given back) and every invalid
   *  answer. */
  used = 0;
  /** Speculative candidates cancelled as moot. */
  cancelled = 0;
  /** Units given back for candidates cancelled as moot (refund). */
  refunded = 0;
  duplicates = 0;
  invalid = 0;
  /** Proposals being generated now. */
  proposing = 0;
  private reserved = 0;
  /** Units kept for the operators' closing proposals until the run asks for them. */
  private closingHeld = 0;
  private draftsUsed = 0;
  private turn = 0;
  private readonly exhausted = new Set<string>();
  private readonly draftsDone = new Set<string>();
  private readonly disabled = new Set<string>();
  private readonly failuresInARow = new Map<string, number>();
  private readonly expansionCount = new Map<string, number>();
  private readonly proposingPerOp = new Map<string, number>();

  constructor(private readonly opts: SchedulerOptions) {}

  /** Keeps one unit for the closing proposals (a spec with several shapes, where a per-shape table may pay). */
  holdForClosing(): void {
    const { budget } = this.opts;
    if (budget !== undefined && budget >= 4 && this.used < budget && this.concluding.length) this.closingHeld = 1;
  }

  /** The unit kept for the closing proposals goes back to the search (one shape: no table to build). */
  releaseClosing(): void {
    this.closingHeld = 0;
  }

  /** A resumed run's spending so far. */
  resume(counters: { used: number; duplicates?: number; invalid?: number }): void {
    this.used = counters.used;
    this.duplicates = counters.duplicates ?? 0;
    this.invalid = counters.invalid ?? 0;
    this.draftsUsed = this.opts.store.candidates.filter((c) => c.mode === 'draft').length;
    // the units given back before: the proposals the run holds (cancelled ones too) beyond the units it counts as
    // used, at most one for each cancelled candidate (an empty answer's unit makes this a lower bound)
    const all = this.opts.store.candidates.filter((c) => c.operator !== 'baseline');
    const cancelled = all.filter((c) => c.state === 'cancelled').length;
    this.refunded = Math.max(0, Math.min(cancelled, all.length + this.duplicates + this.invalid - this.used));
  }

  /** A candidate cancelled as moot gives its unit back while the run's refunds stay within their share of the
   *  budget (see speculation.ts). Returns whether it did. */
  refund(): boolean {
    const { budget, refundShare = REFUND_SHARE } = this.opts;
    if (budget === undefined || this.refunded >= Math.round(budget * refundShare) || this.used <= 0) return false;
    this.used--;
    this.refunded++;
    return true;
  }

  budgetLeft(): number {
    const { budget } = this.opts;
    return budget === undefined ? Infinity : budget - this.used - this.reserved - this.closingHeld;
  }

  /** The budget is spent, the unit kept for the closing proposals aside. */
  get spent(): boolean {
    return this.opts.budget !== undefined && this.used + this.reserved >= this.opts.budget - this.closingHeld;
  }

  /** A unit is kept for the closing proposals. */
  get holdsClosing(): boolean {
    return this.closingHeld > 0;
  }

  /** The run asks for the closing proposals: the unit kept for them is theirs now. */
  openClosing(): void {
    this.closingHeld = 0;
  }

  /** Operators not dropped that make a closing proposal. */
  get concluding(): Operator[] {
    return this.opts.operators.filter((o) => o.conclude && !this.disabled.has(o.name));
  }

  /** The next proposal to start, when the budget and the pipeline (with `waiting` candidates) have room. */
  next(waiting: number, only?: (op: Operator) => boolean): { op: Operator; parent?: Candidate } | undefined {
    if (this.budgetLeft() <= 0 || this.proposing + waiting >= this.opts.depth) return undefined;
    return this.pickOperator(only);
  }

  /** Operators take turns; each drafts (no parent) until the drafting budget is spent, then refines the policy's
   *  pick. `only`: the operators that may propose now (beside the baseline: those that speculate). */
  private pickOperator(only?: (op: Operator) => boolean): { op: Operator; parent?: Candidate } | undefined {
    const ops = this.opts.operators;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[(this.turn + i) % ops.length];
      if ((only && !only(op)) || this.disabled.has(op.name) || (this.proposingPerOp.get(op.name) ?? 0) >= Math.min(this.opts.depth, op.concurrency ?? Infinity)) continue;
      if (this.draftsUsed < this.opts.draftBudget && !this.draftsDone.has(op.name)) {
        this.turn = (this.turn + i + 1) % ops.length;
        return { op };
      }
      let parent = this.opts.policy.select(this.view, { operator: op.name, repairs: op.repairs });
      if (op.speculates) {
        const view = this.view;
        parent = speculativeParent({ candidates: view.candidates, isExhausted: (id) => view.isExhausted(op.name, id), expansions: view.expansions }, op.name, parent);
      }
      if (parent) {
        this.turn = (this.turn + i + 1) % ops.length;
        return { op, parent };
      }
    }
    return undefined;
  }

  private get view(): SelectionView {
    return {
      candidates: this.opts.store.candidates,
      isExhausted: (op, id) => this.exhausted.has(`${op}\u0000${id}`),
      expansions: (id) => this.expansionCount.get(id) ?? 0,
    };
  }

  /** A proposal started: one budget unit is held for it until its answer is in. */
  begin(op: Operator, parent: Candidate | undefined): void {
    this.reserved++;
    this.proposing++;
    this.proposingPerOp.set(op.name, (this.proposingPerOp.get(op.name) ?? 0) + 1);
    if (parent) this.expansionCount.set(parent.id, (this.expansionCount.get(parent.id) ?? 0) + 1);
  }

  /** The proposal's answer (or failure) is in. */
  end(op: Operator): void {
    this.reserved--;
    this.proposing--;
    this.proposingPerOp.set(op.name, (this.proposingPerOp.get(op.name) ?? 1) - 1);
  }

  /** Turns an answer into candidates, as far as the budget goes; duplicates and garbage cost a unit each.
   *  `speculative`: the parent's verdict was not in when the proposal started. */
  accept(op: Operator, parent: Candidate | undefined, batch: ProposalBatch, sink: ProposalSink, speculative = false): void {
    const { store } = this.opts;
    let left = this.budgetLeft();
    let units = 0;
    for (const invalid of batch.invalid ?? []) {
      if (left <= 0) break;
      left--;
      units++;
      this.invalid++;
      sink.invalid(invalid);
    }
    for (const p of batch.proposals) {
      if (left <= 0) break;
      left--;
      units++;
      const hash = sourceHash(p.source, this.opts.lang);
      const twin = store.twinOf(hash);
      if (twin) {
        this.duplicates++;
        sink.invalid({ operator: p.operator || op.name, reason: `the same program as ${twin}; not evaluated again` });
        continue;
      }
      sink.proposed({
        id: store.nextId(),
        parents: p.parents.length ? p.parents : parent ? [parent.id] : [],
        operator: p.operator || op.name,
        mode: p.mode ?? (parent ? 'improve' : 'draft'),
        source: p.source,
        hash,
        state: 'queued',
        rationale: p.rationale,
        knobs: p.knobs,
        ...(speculative ? { speculative: true } : {}),
        timings: { proposedAt: Date.now() },
      });
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

  /** An operator threw: the attempt costs a unit; after too many failures in a row the operator is dropped.
   *  Returns how many times in a row it failed, and whether it (or every operator) is now dropped. */
  failed(op: Operator, e: Error, sink: ProposalSink): { inARow: number; dropped: boolean; allDropped: boolean } {
    if (this.budgetLeft() > 0) this.used++;
    this.invalid++;
    sink.invalid({ operator: op.name, reason: `the operator failed: ${e.message}` });
    const inARow = (this.failuresInARow.get(op.name) ?? 0) + 1;
    this.failuresInARow.set(op.name, inARow);
    const dropped = inARow >= this.opts.maxOperatorFailures;
    if (dropped) this.disabled.add(op.name);
    return { inARow, dropped, allDropped: dropped && this.opts.operators.every((o) => this.disabled.has(o.name)) };
  }
}
