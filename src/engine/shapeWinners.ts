// Which candidate is fastest on each shape of the spec. Every evaluation times every shape, so the run already
// holds a per-shape search; when different configurations win different shapes, a launcher that picks per
// shape can beat every single configuration. Speeds per shape are against the median of all baseline timings
// of that shape (as runReference.ts scores whole candidates), so a lucky baseline timing decides nothing.
import type { Candidate } from './candidate';

export interface ShapeWinner {
  shape: Record<string, unknown>;
  candidate: Candidate;
  /** median(baseline_ms) / candidate_ms on this shape. */
  speedup: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Per-shape speeds of each correct candidate that timed every shape (keyed by the shape's JSON). */
export function shapeSpeeds(candidates: readonly Candidate[]): { shapes: Array<Record<string, unknown>>; speeds: Map<Candidate, number[]> } {
  const ok = candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok' && c.verdict.shapes?.length);
  const baseline = new Map<string, number[]>();
  for (const c of ok) {
    for (const s of c.verdict!.shapes!) {
      const key = JSON.stringify(s.shape);
      if (s.baseline_ms > 0) baseline.set(key, [...(baseline.get(key) ?? []), s.baseline_ms]);
    }
  }
  const first = ok[0]?.verdict?.shapes ?? [];
  const shapes = first.map((s) => s.shape);
  const keys = shapes.map((s) => JSON.stringify(s));
  const speeds = new Map<Candidate, number[]>();
  for (const c of ok) {
    const byKey = new Map(c.verdict!.shapes!.map((s) => [JSON.stringify(s.shape), s.candidate_ms]));
    if (!keys.every((k) => (byKey.get(k) ?? 0) > 0 && baseline.get(k)?.length)) continue;
    speeds.set(c, keys.map((k) => median(baseline.get(k)!) / byKey.get(k)!));
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
