// What a verdict is worth to the search (the engine ranks candidates by it).
import type { Verdict } from '../contract/verdict';

/** Fitness: the geometric-mean speedup, 0 unless the candidate is correct. */
export function fitness(verdict: Verdict | undefined): number {
  if (!verdict || verdict.status !== 'ok') return 0;
  return typeof verdict.speedup === 'number' && Number.isFinite(verdict.speedup) ? verdict.speedup : 0;
}
