// Settings past a falling trend: along one knob, a judged setting no faster on any shape than the next one
// further from it says the speed falls that way, and a setting a step further still is slower on every shape.
// The tuner proposes none (a learned region, tuneOperator.ts), and the run cancels one already proposed when a
// verdict completes the trend (evolutionRun.ts): on the H100, Liger's GeGLU at one warp (four shapes, rows of
// 3-24k) took 45 s to compile, check and time while the rest of its tune's first wave was judged in 21 s, and the
// search waited for it alone; two and four warps, judged by then, read 0.32x and 0.67x, below eight warps on
// every shape, and one warp read 0.22x.
import type { Candidate } from './candidate';
import { scoreOf } from './pairedScore';
import { shapeSpeeds } from './shapeWinners';
import { isPending, MOOT_BELOW_BEST } from './speculation';

/** How much faster than B a judged A may be on a shape, and the step from B to A still count as no gain there. */
export const TREND_TIE = 1.01;

/** A candidate's knob values when every one is a number (a tuner's setting; a per-shape table's are text). */
function numericKnobs(c: Candidate): Record<string, number> | undefined {
  if (!c.knobs || c.mode === 'dispatch') return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(c.knobs)) {
    if (typeof v !== 'number') return undefined;
    out[k] = v;
  }
  return out;
}

/**
 * Why a setting of `operator` lies past a falling trend of the run's verdicts (undefined: it does not). Two judged
 * settings A and B of that operator differ from it in one knob alone and lie on one side of it, A the nearer (a
 * value left as the kernel computes it, 0, is on no side). Where the step from B to A paid on no shape (A at most
 * TREND_TIE above B on each) and A is far below the run's best (MOOT_BELOW_BEST), the setting lies a step further
 * on a slope that has only fallen: for a speed that rises to one peak along the knob and falls past it, it is slower
 * than A on every shape, so fastest on none. A that reads the fastest of the run on a shape reads it within
 * TREND_TIE of B there: a shape the knob does not move (Liger's GeGLU on rows of 3072: every warp count from 4 to
 * 32 within 1%), whose fastest reading is the noise's. Until 2026-12-05 such a tie kept the slope open, and GeGLU's
 * two warps, 0.32x, compiled and was judged to the end while the run waited for it (37.5 s of a 54.5 s tune on an
 * H200).
 */
export function pastTrend(operator: string, candidates: readonly Candidate[]): (values: Record<string, number>) => string | undefined {
  const done = candidates.filter((c) => c.state === 'done' && scoreOf(c) > 0);
  if (!done.length) return () => undefined;
  const best = Math.max(...done.map((c) => scoreOf(c)));
  const { speeds } = shapeSpeeds(done);
  const judged = done.flatMap((c) => {
    const v = c.operator === operator ? numericKnobs(c) : undefined;
    const xs = speeds.get(c);
    return v && xs ? [{ c, v, xs }] : [];
  });
  return (mine) => {
    const names = Object.keys(mine);
    for (const k of names) {
      if (!(mine[k] > 0)) continue;
      const line = judged.filter(({ v }) => v[k] > 0 && v[k] !== mine[k] && Object.keys(v).length === names.length
        && names.every((o) => o === k || v[o] === mine[o]));
      for (const side of [1, -1]) {
        const beyond = line.filter(({ v }) => (v[k] - mine[k]) * side > 0).sort((a, b) => (a.v[k] - b.v[k]) * side);
        if (beyond.length < 2) continue;
        const [a, b] = beyond;
        if (scoreOf(a.c) < MOOT_BELOW_BEST * best && a.xs.every((x, i) => x <= b.xs[i] * TREND_TIE)) {
          return `${k}=${mine[k]} lies past ${k}=${a.v[k]} (${a.c.id}, ${scoreOf(a.c).toFixed(3)}x), which was no faster `
            + `than ${k}=${b.v[k]} (${b.c.id}, ${scoreOf(b.c).toFixed(3)}x) on any shape and is far below the run's best `
            + `(${best.toFixed(3)}x)`;
        }
      }
    }
    return undefined;
  };
}

/** Why a pending candidate is moot by a trend of the run's verdicts (pastTrend), or undefined. */
export function pastTrendReason(p: Candidate, candidates: readonly Candidate[]): string | undefined {
  return pastTrendCandidates([p], candidates)[0]?.reason;
}

/** The candidates of `pending` that lie past a trend of the run's verdicts, each with why (one reading of the
 *  verdicts per operator). */
export function pastTrendCandidates(pending: readonly Candidate[], candidates: readonly Candidate[]): Array<{ candidate: Candidate; reason: string }> {
  const byOperator = new Map<string, ReturnType<typeof pastTrend>>();
  const out: Array<{ candidate: Candidate; reason: string }> = [];
  for (const p of pending) {
    const mine = isPending(p) ? numericKnobs(p) : undefined;
    if (!mine) continue;
    if (!byOperator.has(p.operator)) byOperator.set(p.operator, pastTrend(p.operator, candidates));
    const reason = byOperator.get(p.operator)!(mine);
    if (reason) out.push({ candidate: p, reason });
  }
  return out;
}
