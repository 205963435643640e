// One run as the editor sees it: the panel's view (rows without sources) kept up to date from the engine's
// events, plus the candidates themselves for details, previews and accepting. Each event becomes one delta
// that is applied here and forwarded to the panel, so the host's state is always what the panel would show.
import type { Candidate } from '../engine/candidate';
import type { EngineEvent } from '../engine/events';
import { scoreInterval, scoreOf } from '../engine/pairedScore';
import type { CandidateRow, RunDelta, RunHeader, RunStatus, RunView } from '../protocol';
import { applyDelta, formatCandidateSpeedup, rowIndex } from '../runModel';

/** A leader's confirmation: none yet, kept its place (confirmed), or not ok when judged again (lost). */
export function confirmationOf(c: Candidate): CandidateRow['confirmation'] {
  if (!c.confirmations?.length) return undefined;
  return c.confirmations.every((v) => v.status === 'ok') && scoreOf(c) > 0 ? 'confirmed' : 'lost';
}

export function rowOf(c: Candidate): CandidateRow {
  const confirmation = confirmationOf(c);
  return {
    id: c.id,
    parents: c.parents,
    operator: c.operator,
    mode: c.mode,
    state: c.state,
    status: c.verdict?.status,
    // The engine's score for it, the one figure shown everywhere: the paired ratio with its interval, and for a
    // re-judged leader the confirmed score (0 once it lost its place).
    speedup: c.verdict?.status !== 'ok' ? undefined : scoreOf(c),
    ...(scoreInterval(c) ? { interval: scoreInterval(c) } : {}),
    host: c.placement?.host ?? c.verdict?.host,
    reason: c.verdict?.reason ?? c.cancelled,
    proposedAt: c.timings.proposedAt,
    finishedAt: c.timings.finishedAt,
    ...(confirmation ? { confirmation } : {}),
  };
}

/** The state of a row whose run ended before it was judged. */
export const NOT_JUDGED = 'not judged';
/** The state of the row whose evaluation failed and ended the run (no verdict: the harness or its host failed,
 *  e.g. a Triton spec that cannot import torch); its reason says why. */
export const JUDGING_FAILED = 'failed';

/** A row the run has not judged (nor already said it will not). */
function isOpen(r: CandidateRow): boolean {
  return r.state !== 'done' && r.state !== 'cancelled' && r.state !== NOT_JUDGED && r.state !== JUDGING_FAILED && !r.status;
}

/** An open row once its run has ended: the one whose failure ended the run says so, the others were not judged. */
function closed(r: CandidateRow, failure: { candidate?: string; message?: string }): CandidateRow {
  return r.id === failure.candidate ? { ...r, state: JUDGING_FAILED, ...(failure.message ? { reason: failure.message } : {}) } : { ...r, state: NOT_JUDGED };
}

/** The figure the editor shows for a candidate (lens, preview, notification), the same as its table row. */
export function candidateFigure(c: Candidate): string {
  return formatCandidateSpeedup(rowOf(c));
}

export class RunState {
  readonly view: RunView;
  readonly candidates = new Map<string, Candidate>();
  private readonly index: Map<string, number>;

  constructor(header: RunHeader, candidates: readonly Candidate[] = [], points: RunView['bestOverTime'] = [],
    log: RunView['log'] = []) {
    this.view = { ...header, candidates: [], bestOverTime: [...points], log: [...log] };
    this.index = rowIndex(this.view);
    for (const c of candidates) this.candidates.set(c.id, c);
    applyDelta(this.view, { runId: header.runId, rows: candidates.map(rowOf) }, this.index);
    if (header.status !== 'running') this.settle();
  }

  get runId(): string {
    return this.view.runId;
  }

  header(): RunHeader {
    const { candidates: _c, bestOverTime: _b, log: _l, ...h } = this.view;
    return h;
  }

  /** The source the run started from (candidate c0000, the baseline). */
  get baseline(): Candidate | undefined {
    return [...this.candidates.values()].find((c) => c.operator === 'baseline' || c.parents.length === 0);
  }

  best(): Candidate | undefined {
    const id = this.view.best?.id;
    return id ? this.candidates.get(id) : undefined;
  }

  /** Once the run has ended: rows it left proposed, queued or evaluating say they were not judged. */
  settle(): RunDelta | undefined {
    const open = this.view.candidates.filter(isOpen);
    const failure = { candidate: this.view.failedCandidate, message: this.view.reason };
    return open.length ? this.apply({ runId: this.runId, rows: open.map((r) => closed(r, failure)) }) : undefined;
  }

  apply(delta: RunDelta): RunDelta {
    applyDelta(this.view, delta, this.index);
    return delta;
  }

  /** Turns an engine event into the delta the panel needs (undefined when nothing visible changed). */
  onEvent(ev: EngineEvent): RunDelta | undefined {
    const runId = this.runId;
    const delta = ((): RunDelta | undefined => {
      switch (ev.type) {
        case 'run-started':
          return { runId, header: { runDir: ev.runDir, specPath: ev.specPath, kernel: ev.kernel, status: 'running', reason: undefined } };
        case 'candidate-proposed':
        case 'candidate-evaluated':
        case 'candidate-cancelled':
          this.candidates.set(ev.candidate.id, ev.candidate);
          return { runId, rows: [rowOf(ev.candidate)] };
        case 'candidate-started': {
          const c = this.candidates.get(ev.id);
          if (c) c.state = 'evaluating';
          return { runId, rows: [{ ...(c ? rowOf(c) : { id: ev.id, parents: [], operator: '?', proposedAt: ev.at }), state: 'evaluating', host: ev.host }] };
        }
        case 'best-improved':
          return { runId, header: { best: { id: ev.id, speedup: ev.speedup } }, points: [{ t: Math.max(0, ev.at - this.view.startedAt), speedup: ev.speedup, id: ev.id }] };
        case 'candidate-confirmed':
          this.candidates.set(ev.candidate.id, ev.candidate);
          return { runId, rows: [rowOf(ev.candidate)], header: { confirming: true } };
        case 'proposal-invalid':
          return { runId, header: { invalidProposals: this.view.invalidProposals + 1 }, log: [{ level: 'warn', message: `${ev.invalid.operator}: ${ev.invalid.reason}`, at: ev.at }] };
        case 'progress':
          return { runId, header: { evaluated: ev.evaluated, used: ev.used ?? this.view.used, budget: ev.budget ?? this.view.budget, etaS: ev.etaS } };
        case 'log':
          return { runId, log: [{ level: ev.level, message: ev.message, at: ev.at }] };
        case 'run-finished': {
          const status: RunStatus = ev.reason === 'stopped' ? 'stopped' : ev.reason === 'error' ? 'failed' : 'finished';
          // The run's final word: the confirmed best (its confirmed figure), not the last best-improved.
          const b = ev.summary.best;
          const best = b && b.status === 'ok' ? { id: b.id, speedup: b.speedup, ...(b.confirmed ? { confirmed: true } : {}) } : this.view.best;
          // The chart ends on that figure when confirming moved it.
          const last = this.view.bestOverTime.at(-1);
          const points = best && (last?.id !== best.id || last.speedup !== best.speedup) ? [{ t: Math.max(0, ev.at - this.view.startedAt), speedup: best.speedup, id: best.id }] : undefined;
          // Each confirmation moved the run's reference: the confirmed rows show the scores the run ended with.
          // Every judged row takes the score the run ended with (each figure is against the run's final reference).
          const rows = [...this.candidates.values()].filter((c) => c.verdict).map(rowOf);
          // Rows left proposed, queued or evaluating end in the same delta as the header (a panel that shows the
          // run stopped never shows one of its rows still evaluating).
          // A failed run's reason is what failed (the panel shows it whole), as a stored run's is; the row of the
          // candidate it could not judge says so too.
          const reason = ev.reason === 'error' && ev.error ? ev.error.message : ev.reason;
          const failedCandidate = ev.reason === 'error' ? ev.error?.candidate : undefined;
          rows.push(...this.view.candidates.filter(isOpen).map((r) => closed(r, { candidate: failedCandidate, message: reason })));
          return { runId, header: { status, reason, best, etaS: undefined, confirming: undefined, ...(failedCandidate ? { failedCandidate } : {}) }, points, ...(rows.length ? { rows } : {}) };
        }
        default:
          return undefined;
      }
    })();
    return delta && this.apply(delta);
  }
}
