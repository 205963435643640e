// The run's reference timing. Every evaluation times the baseline again next to the candidate; on a busy
// machine one of those baseline timings can be off by several times, and a ratio to it makes a candidate
// look far better (or worse) than it is. The run keeps every baseline timing per shape and scores each
// candidate against their median: the geometric mean over shapes of median(baseline_ms) / candidate_ms.
// Ranking by this score is ranking by the candidate's own times (the reference is common to all), so a
// candidate never wins on a slow baseline measurement.
import type { Candidate } from './candidate';
import type { Verdict } from '../contract/verdict';
import { fitness } from './fitness';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export class RunReference {
  private readonly baselineMs = new Map<string, number[]>();

  /** Takes the baseline timings of a verdict. */
  add(verdict: Verdict | undefined): void {
    for (const s of verdict?.shapes ?? []) {
      if (!(s.baseline_ms > 0) || !Number.isFinite(s.baseline_ms)) continue;
      const key = JSON.stringify(s.shape);
      const list = this.baselineMs.get(key) ?? [];
      list.push(s.baseline_ms);
      this.baselineMs.set(key, list);
    }
  }

  /** Baseline timings seen for the shape with the fewest. */
  get samples(): number {
    return this.baselineMs.size ? Math.min(...[...this.baselineMs.values()].map((l) => l.length)) : 0;
  }

  /** The verdict's speedup against the run's reference; 0 unless correct; the harness's figure when it gave no timings. */
  speedup(verdict: Verdict | undefined): number {
    const f = fitness(verdict);
    const shapes = verdict?.shapes ?? [];
    if (f <= 0 || !shapes.length) return f;
    let logSum = 0;
    for (const s of shapes) {
      const ref = this.baselineMs.get(JSON.stringify(s.shape));
      if (!ref?.length || !(s.candidate_ms > 0)) return f;
      logSum += Math.log(median(ref) / s.candidate_ms);
    }
    return Math.exp(logSum / shapes.length);
  }

  /** A candidate's score: its speedup, or for a confirmed one the lowest over its measurements (0 if one failed). */
  score(c: Pick<Candidate, 'verdict' | 'confirmations'>): number {
    const first = this.speedup(c.verdict);
    if (!c.confirmations?.length) return first;
    return Math.min(first, ...c.confirmations.map((v) => this.speedup(v)));
  }
}

/** What ranks a candidate: the engine's score against the run's reference, else the harness's speedup. */
export function scoreOf(c: Pick<Candidate, 'verdict'> & { score?: number }): number {
  if (!c.verdict || c.verdict.status !== 'ok') return 0;
  return c.score ?? fitness(c.verdict);
}
