// What a candidate's speedup is: paired ratios only. Each evaluation times the candidate and the baseline side by
// side (interleaved rounds on the same device, within one evaluation) and reports their ratio per shape with an
// interval; a candidate judged more than once (confirmed) scores the lowest of its evaluations' ratios (the top of
// many noisy figures is biased upward: the winner's curse).
// Times from different evaluations are never divided by each other: a baseline timed in another moment, under
// another load, says nothing about this candidate's.
import type { Candidate } from './candidate';
import type { Verdict } from '../contract/verdict';
import { fitness } from './fitness';

export type Interval = [number, number];

/** One sentence for reports: what the figure is. */
export const SPEEDUP_MEANING = 'paired ratio: candidate and baseline timed side by side in each evaluation, geometric mean over shapes; a confirmed candidate\'s lowest evaluation';

function measurements(c: Pick<Candidate, 'verdict' | 'confirmations'>): Verdict[] {
  return c.verdict ? [c.verdict, ...(c.confirmations ?? [])] : [];
}

/** A verdict's interval for its speedup; a point when the harness gave none. */
export function verdictInterval(v: Verdict | undefined): Interval | undefined {
  const f = fitness(v);
  if (f <= 0) return undefined;
  const iv = v?.speedup_interval;
  if (Array.isArray(iv) && iv.length === 2 && iv.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0) && iv[0] <= f && f <= iv[1]) {
    return [iv[0], iv[1]];
  }
  return [f, f];
}

/** The evaluation that sets the score: the one of lowest paired speedup; undefined when one is not ok. */
function lowest(c: Pick<Candidate, 'verdict' | 'confirmations'>): Verdict | undefined {
  const all = measurements(c);
  if (!all.length || all.some((v) => fitness(v) <= 0)) return undefined;
  return all.reduce((a, b) => (fitness(b) < fitness(a) ? b : a));
}

/** The candidate's score: the lowest of its evaluations' paired speedups; 0 when one of them is not ok. */
export function pairedScore(c: Pick<Candidate, 'verdict' | 'confirmations'>): number {
  return fitness(lowest(c));
}

/** The score's interval: that of the evaluation the score comes from. */
export function scoreInterval(c: Pick<Candidate, 'verdict' | 'confirmations'>): Interval | undefined {
  const v = lowest(c);
  return v ? verdictInterval(v) : undefined;
}

/** What ranks a candidate: its paired score, 0 unless correct. */
export function scoreOf(c: Pick<Candidate, 'verdict' | 'confirmations'> & { score?: number }): number {
  if (!c.verdict || c.verdict.status !== 'ok') return 0;
  return c.score ?? pairedScore(c);
}

/** Judged again and correct every time. */
function confirmed(c: Pick<Candidate, 'verdict' | 'confirmations'>): boolean {
  return !!c.confirmations?.length && pairedScore(c) > 0;
}

/**
 * Whether a ranks above b: a higher score, and either a confirmed (judged again) or its interval clearing b's
 * (a's lower end above b's upper end). Two figures whose intervals overlap are not told apart by one measurement.
 */
export function outranks(a: Pick<Candidate, 'verdict' | 'confirmations'> & { score?: number },
  b: Pick<Candidate, 'verdict' | 'confirmations'> & { score?: number }): boolean {
  const sa = scoreOf(a);
  const sb = scoreOf(b);
  if (!(sa > sb)) return false;
  if (sb <= 0 || confirmed(a)) return true;
  const ia = scoreInterval(a);
  const ib = scoreInterval(b);
  return !ia || !ib || ia[0] > ib[1];
}

/** "1.10x (1.08-1.12)": the score and its interval, as the CLI and the panel show them. */
export function formatSpeedup(score: number, interval: Interval | undefined): string {
  if (!(score > 0)) return '0.00x';
  if (!interval || (interval[0] === score && interval[1] === score)) return `${score.toFixed(2)}x`;
  return `${score.toFixed(2)}x (${interval[0].toFixed(2)}-${interval[1].toFixed(2)})`;
}
