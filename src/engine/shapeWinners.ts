// Which candidate is fastest on each shape of the spec. Every evaluation times every shape, so the run already
// holds a per-shape search; when different configurations win different shapes, a launcher that picks per
// shape can beat every single configuration. A candidate's speed on a shape is its paired ratio there (timed
// side by side with the baseline in the same evaluation, as pairedScore.ts scores whole candidates).
import type { Candidate } from './candidate';

export interface ShapeWinner {
  shape: Record<string, unknown>;
  candidate: Candidate;
  /** The paired speedup on this shape. */
  speedup: number;
}

/** Per-shape paired speedups of each correct candidate that timed every shape of the first one (keyed by the shape's JSON). */
export function shapeSpeeds(candidates: readonly Candidate[]): { shapes: Array<Record<string, unknown>>; speeds: Map<Candidate, number[]> } {
  const ok = candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok' && c.verdict.shapes?.length);
  const shapes = (ok[0]?.verdict?.shapes ?? []).map((s) => s.shape);
  const keys = shapes.map((s) => JSON.stringify(s));
  const speeds = new Map<Candidate, number[]>();
  for (const c of ok) {
    const byKey = new Map(c.verdict!.shapes!.map((s) => [JSON.stringify(s.shape), s.speedup]));
    if (!keys.every((k) => (byKey.get(k) ?? 0) > 0 && Number.isFinite(byKey.get(k)))) continue;
    speeds.set(c, keys.map((k) => byKey.get(k)!));
  }
  return { shapes, speeds };
}

const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/**
 * The fastest candidate per shape among `eligible` ones, and what a launcher choosing per shape would score
 * (the geometric mean of the winners' speeds) against the best single candidate.
 */
export function shapeWinners(candidates: readonly Candidate[], eligible: (c: Candidate) => boolean): {
  winners: ShapeWinner[];
  dispatchScore: number;
  bestSingle: number;
} {
  const { shapes, speeds } = shapeSpeeds(candidates);
  const pool = [...speeds].filter(([c]) => eligible(c));
  if (!pool.length || !shapes.length) return { winners: [], dispatchScore: 0, bestSingle: 0 };
  const winners = shapes.map((shape, i) => {
    const [candidate, s] = pool.reduce((a, b) => (b[1][i] > a[1][i] ? b : a));
    return { shape, candidate, speedup: s[i] };
  });
  return {
    winners,
    dispatchScore: geomean(winners.map((w) => w.speedup)),
    bestSingle: Math.max(...pool.map(([, s]) => geomean(s))),
  };
}
