// The run's candidates and their scores (OpenEvolve's "database"): the graph in creation order, one candidate
// per normalized source, each scored by its paired speedup (pairedScore.ts), and the best.
import type { Verdict } from '../contract/verdict';
import type { Candidate } from './candidate';
import { outranks, pairedScore, scoreOf } from './pairedScore';

export function candidateId(n: number): string {
  return `c${String(n).padStart(4, '0')}`;
}

/** Judged again at the end and correct both times. */
export function isConfirmed(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom' | 'score'>): boolean {
  return !!c.confirmations?.length && scoreOf(c) > 0;
}

export class CandidateStore {
  readonly candidates: Candidate[] = [];
  private readonly byHash = new Map<string, string>();
  private readonly hashes = new Set<string>();
  private nextNumber = 0;
  private leader?: Candidate;

  /** c0000, the kernel as it stands. */
  get baseline(): Candidate | undefined {
    return this.candidates[0];
  }

  /** The best candidate so far (the baseline until something beats it). */
  get best(): Candidate | undefined {
    return this.leader;
  }

  /** Hashes of every source proposed in this run (judged or queued). */
  get seen(): ReadonlySet<string> {
    return this.hashes;
  }

  /** The id the next candidate gets. */
  nextId(): string {
    return candidateId(this.nextNumber);
  }

  /** The id of a candidate with this normalized source, if there is one. */
  twinOf(hash: string): string | undefined {
    return this.byHash.get(hash);
  }

  /** Takes a candidate in; one that comes with a verdict (a resumed run's) is scored. */
  add(c: Candidate): void {
    this.candidates.push(c);
    this.byHash.set(c.hash, c.id);
    this.hashes.add(c.hash);
    this.nextNumber = Math.max(this.nextNumber, Number(c.id.slice(1)) + 1);
    if (c.verdict) this.rescore(c);
  }

  /** A cancelled candidate's source is no longer taken: it was never judged, so it may be proposed again (from a
   *  parent that turned out well). */
  release(c: Candidate): void {
    if (this.byHash.get(c.hash) === c.id) this.byHash.delete(c.hash);
    this.hashes.delete(c.hash);
  }

  judged(c: Candidate, verdict: Verdict): void {
    c.verdict = verdict;
    this.rescore(c);
  }

  /** A contender judged again: its score now comes from its confirmations (0 when any evaluation is not ok). */
  confirmed(c: Candidate, confirmation: Verdict): void {
    c.confirmations = [...(c.confirmations ?? []), confirmation];
    this.rescore(c);
  }

  /** Makes `c` the best when it outranks the best so far; true when it did. */
  considerBest(c: Candidate): boolean {
    if (this.leader && !outranks(c, this.leader)) return false;
    this.leader = c;
    return true;
  }

  /** The run's best: the top candidate judged after the ranking picked it (leaderConfirmation.ts), else the top
   *  confirmed one, else the top score; or the baseline if it scores higher. */
  settleBest(): void {
    const judged = this.candidates.filter((c) => c.verdict);
    const confirmed = judged.filter(isConfirmed);
    const finalists = confirmed.filter((c) => c.figureFrom !== undefined);
    const top = finalists.length ? finalists : confirmed;
    const pool = top.length ? [...top, ...(this.baseline?.verdict ? [this.baseline] : [])] : judged;
    let best: Candidate | undefined;
    for (const c of pool) if (!best || outranks(c, best)) best = c;
    this.leader = best ?? this.leader;
  }

  /** The candidate's score: its paired speedup (pairedScore.ts). */
  private rescore(c: Candidate): void {
    c.score = pairedScore(c);
  }
}
