// Which candidate is fastest on each shape of the spec. Every evaluation times every shape, so the run already
// holds a per-shape search; when different configurations win different shapes, a launcher that picks per
// shape can beat every single configuration. A candidate's speed on a shape is its paired ratio there (timed
// side by side with the baseline in the same evaluation, as pairedScore.ts scores whole candidates), with the
// ratio's interval where the harness gave one.
import type { Candidate } from './candidate';
import { geometricMean } from './pairedScore';

export interface ShapeWinner {
  shape: Record<string, unknown>;
  candidate: Candidate;
  /** The paired speedup on this shape. */
  speedup: number;
  /** Its 95% interval, when the verdict has one. */
  interval?: [number, number];
}

/** Per-shape paired speedups (and intervals) of each correct candidate that timed every shape of the first one. */
export function shapeSpeeds(candidates: readonly Candidate[]): {
  shapes: Array<Record<string, unknown>>;
  speeds: Map<Candidate, number[]>;
  intervals: Map<Candidate, Array<[number, number] | undefined>>;
} {
  const ok = candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok' && c.verdict.shapes?.length);
  const shapes = (ok[0]?.verdict?.shapes ?? []).map((s) => s.shape);
  const keys = shapes.map((s) => JSON.stringify(s));
  const speeds = new Map<Candidate, number[]>();
  const intervals = new Map<Candidate, Array<[number, number] | undefined>>();
  for (const c of ok) {
    const byKey = new Map(c.verdict!.shapes!.map((s) => [JSON.stringify(s.shape), s]));
    if (!keys.every((k) => (byKey.get(k)?.speedup ?? 0) > 0 && Number.isFinite(byKey.get(k)!.speedup))) continue;
    speeds.set(c, keys.map((k) => byKey.get(k)!.speedup!));
    intervals.set(c, keys.map((k) => byKey.get(k)!.interval));
  }
  return { shapes, speeds, intervals };
}


/** Without intervals, a shape's winner must beat the best single setting there by this much to count as different. */
export const SHAPE_MARGIN = 1.02;

/**
 * The fastest candidate per shape among `eligible` ones, what a launcher choosing per shape would score (the
 * geometric mean of the winners' speeds) against the best single candidate, and the shapes that disagree: those
 * whose winner is another candidate than the best single one and beats it there beyond both intervals (the
 * winner's lower end above the single's upper end; without intervals, by SHAPE_MARGIN).
 */
export function shapeWinners(candidates: readonly Candidate[], eligible: (c: Candidate) => boolean): {
  winners: ShapeWinner[];
  dispatchScore: number;
  bestSingle: number;
  /** The candidate with the best geometric mean over the shapes. */
  single?: Candidate;
  /** Indexes into `winners` of the shapes that disagree with `single`. */
  disagreeing: number[];
  /** What a per-shape table should hold: where shapes disagree, their winners and the single best elsewhere (a
   *  lead within the noise is no reason for another setting); else every shape's winner. */
  table: ShapeWinner[];
} {
  const { shapes, speeds, intervals } = shapeSpeeds(candidates);
  const pool = [...speeds].filter(([c]) => eligible(c));
  if (!pool.length || !shapes.length) return { winners: [], dispatchScore: 0, bestSingle: 0, disagreeing: [], table: [] };
  const winners = shapes.map((shape, i) => {
    const [candidate, s] = pool.reduce((a, b) => (b[1][i] > a[1][i] ? b : a));
    return { shape, candidate, speedup: s[i], ...(intervals.get(candidate)![i] ? { interval: intervals.get(candidate)![i] } : {}) };
  });
  const [single, singleSpeeds] = pool.reduce((a, b) => (geometricMean(b[1]) > geometricMean(a[1]) ? b : a));
  const disagreeing = winners.flatMap((w, i) => {
    if (w.candidate === single) return [];
    const theirs = intervals.get(single)![i];
    const beats = w.interval && theirs ? w.interval[0] > theirs[1] : w.speedup > SHAPE_MARGIN * singleSpeeds[i];
    return beats ? [i] : [];
  });
  const table = !disagreeing.length ? winners : winners.map((w, i) => (disagreeing.includes(i) ? w
    : { shape: w.shape, candidate: single, speedup: singleSpeeds[i], ...(intervals.get(single)![i] ? { interval: intervals.get(single)![i] } : {}) }));
  return { winners, dispatchScore: geometricMean(winners.map((w) => w.speedup)), bestSingle: geometricMean(singleSpeeds), single, disagreeing, table };
}

/** A launch's speed on one shape, pooled over every evaluation that ran it there. */
export interface PooledLaunch {
  /** The launch's key (the same key: the same settings). */
  launch: string;
  /** The geometric mean of its paired speedups on the shape. */
  speedup: number;
  /** How many evaluations ran it on the shape (verdicts and confirmations, tables included). */
  readings: number;
  /** A candidate that launches it on every shape (the setting a table row takes). */
  from: Candidate;
}

/**
 * Per shape, every launch ranked by its speed there, pooled over all the evaluations that ran it: a candidate's
 * verdict and confirmations, and a per-shape table's on the shapes where it runs that launch (a table's time on a
 * shape is its row's launch's time, plus a lookup). So a table judged on every shape is one more reading of each of
 * its rows, and a shape whose two best launches read within the noise of each other gets a second reading of each
 * from two tables. `launchOn` names what a candidate launches on a shape (undefined: not a launch to pool);
 * `single` says which candidates launch one setting everywhere (the rows' sources).
 */
export function pooledShapeLaunches(candidates: readonly Candidate[], launchOn: (c: Candidate, shape: Record<string, unknown>) => string | undefined,
  single: (c: Candidate) => boolean): { shapes: Array<Record<string, unknown>>; ranked: PooledLaunch[][] } {
  const ok = candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok' && c.verdict.shapes?.length);
  const shapes = (ok[0]?.verdict?.shapes ?? []).map((s) => s.shape);
  const ranked = shapes.map((shape) => {
    const key = JSON.stringify(shape);
    const pooled = new Map<string, { speeds: number[]; from?: Candidate }>();
    for (const c of ok) {
      const launch = launchOn(c, shape);
      // a launch that was once judged wrong is no row for a table
      if (launch === undefined || c.confirmations?.some((v) => v.status !== 'ok')) continue;
      const entry = pooled.get(launch) ?? { speeds: [] };
      if (!entry.from && single(c)) entry.from = c;
      for (const v of [c.verdict!, ...(c.confirmations ?? [])]) {
        const s = v.status === 'ok' ? v.shapes?.find((x) => JSON.stringify(x.shape) === key)?.speedup : undefined;
        if (s !== undefined && s > 0 && Number.isFinite(s)) entry.speeds.push(s);
      }
      pooled.set(launch, entry);
    }
    return [...pooled].filter(([, e]) => e.from && e.speeds.length)
      .map(([launch, e]) => ({ launch, speedup: geometricMean(e.speeds), readings: e.speeds.length, from: e.from! }))
      .sort((a, b) => b.speedup - a.speedup);
  });
  return { shapes, ranked };
}
