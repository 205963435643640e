// What a candidate's speedup is: paired ratios only. Each evaluation times the candidate and the baseline side by
// side (interleaved rounds on the same device, within one evaluation) and reports their ratio per shape with an
// interval; a candidate judged again (confirmed) scores the geometric mean of its confirmations alone: its first
// figure is the one it was picked for among many noisy ones, biased upward (the winner's curse), while the
// confirmations were taken after the pick and are not.
// Times from different evaluations are never divided by each other: a baseline timed in another moment, under
// another load, says nothing about this candidate's.
import type { Candidate } from './candidate';
import type { Verdict } from '../contract/verdict';
import { fitness } from './fitness';
import { intervalText } from '../contract/verdict';

export type Interval = [number, number];

/** One sentence for reports: what the figure is. */
export const SPEEDUP_MEANING = 'paired ratio: candidate and baseline timed side by side in each evaluation, geometric mean over shapes; a confirmed candidate: the geometric mean of the evaluations after it was picked';

function measurements(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): Verdict[] {
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

/** The evaluations the score comes from: the confirmations once there are any, else the first; none when any
 * evaluation of the candidate was not ok (a kernel right once and wrong once is not correct). */
function scored(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): Verdict[] {
  const all = measurements(c);
  if (!all.length || all.some((v) => fitness(v) <= 0)) return [];
  const after = c.confirmations?.slice(c.figureFrom ?? 0) ?? [];
  return after.length ? after : c.confirmations?.length ? c.confirmations : [c.verdict!];
}

/** The geometric mean of positive figures (speedups): the one way every score, estimate and table averages
 * ratios. NaN for none. */
export function geometricMean(xs: readonly number[]): number {
  if (xs.length === 1) return xs[0];
  return Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
}

/** The candidate's score: the geometric mean of its confirmations' paired speedups (its first one until it is
 * confirmed); 0 when any of its evaluations is not ok. */
export function pairedScore(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): number {
  const vs = scored(c);
  return vs.length ? geometricMean(vs.map(fitness)) : 0;
}

/** The score's interval. Several evaluations: each one's interval about its figure, combined as independent
 * errors of a mean in log space (root of the summed squares over their number), and never narrower than the
 * evaluations' own figures (they disagreed by that much). */
export function scoreInterval(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): Interval | undefined {
  const vs = scored(c);
  if (!vs.length) return undefined;
  if (vs.length === 1) return verdictInterval(vs[0]);
  const figures = vs.map(fitness);
  const score = geometricMean(figures);
  const below = Math.sqrt(vs.reduce((a, v, i) => a + Math.log(figures[i] / verdictInterval(v)![0]) ** 2, 0)) / vs.length;
  const above = Math.sqrt(vs.reduce((a, v, i) => a + Math.log(verdictInterval(v)![1] / figures[i]) ** 2, 0)) / vs.length;
  return [Math.min(score * Math.exp(-below), ...figures), Math.max(score * Math.exp(above), ...figures)];
}

/** The evaluations a candidate's score comes from (none when any of its evaluations was not ok). */
export function figureVerdicts(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): Verdict[] {
  return scored(c);
}

/** How many evaluations a candidate's score comes from. */
export function scoreEvaluations(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): number {
  return scored(c).length;
}

/** What ranks a candidate: its paired score, 0 unless correct. */
export function scoreOf(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'> & { score?: number }): number {
  if (!c.verdict || c.verdict.status !== 'ok') return 0;
  return c.score ?? pairedScore(c);
}

/** Judged again and correct every time. */
function confirmed(c: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'>): boolean {
  return !!c.confirmations?.length && pairedScore(c) > 0;
}

/**
 * Whether a ranks above b: a higher score, and either a confirmed (judged again) or its interval clearing b's
 * (a's lower end above b's upper end). Two figures whose intervals overlap are not told apart by one measurement.
 */
export function outranks(a: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'> & { score?: number },
  b: Pick<Candidate, 'verdict' | 'confirmations' | 'figureFrom'> & { score?: number }): boolean {
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
  return `${score.toFixed(2)}x${intervalText(score, interval)}`;
}
