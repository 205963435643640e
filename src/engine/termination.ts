// When a run ends: a budget of proposals, wall time, a plateau, a target speedup, or the user's stop.
import type { TerminationReason } from './events';

export interface TerminationLimits {
  /** Proposals the operators may make (each becomes an evaluation, or is wasted as a duplicate or garbage). */
  budget?: number;
  /** Wall-clock limit for this session, seconds. */
  timeS?: number;
  /** Stop after this many evaluations without a significant improvement of the best. */
  plateau?: number;
  /** Stop as soon as the best speedup reaches this. */
  target?: number;
}

/** An improvement smaller than this (relative) is timing noise and does not reset the plateau count. */
export const SIGNIFICANT_GAIN = 0.01;

export interface TerminationState {
  /** Budget units used: proposals (new, duplicate, invalid) across every session of the run. */
  used: number;
  /** Seconds since this session started. */
  elapsedS: number;
  evaluationsSinceImprovement: number;
  bestSpeedup: number;
  stopped: boolean;
}

/**
 * Why the run must end now, or undefined. `budget` only stops new proposals: what is already in flight still
 * gets judged. The others also cancel what is in flight.
 */
export function terminationReason(limits: TerminationLimits, s: TerminationState): TerminationReason | undefined {
  if (s.stopped) return 'stopped';
  if (limits.target !== undefined && s.bestSpeedup >= limits.target) return 'target';
  if (limits.timeS !== undefined && s.elapsedS >= limits.timeS) return 'time';
  if (limits.plateau !== undefined && s.evaluationsSinceImprovement >= limits.plateau) return 'plateau';
  if (limits.budget !== undefined && s.used >= limits.budget) return 'budget';
  return undefined;
}

/** Estimated seconds left: the budget at the rate seen so far, capped by the time limit. */
export function estimateRemainingS(limits: TerminationLimits, s: TerminationState, evaluatedThisSession: number): number | undefined {
  const byTime = limits.timeS !== undefined ? Math.max(0, limits.timeS - s.elapsedS) : undefined;
  let byBudget: number | undefined;
  if (limits.budget !== undefined && evaluatedThisSession > 0) {
    byBudget = Math.max(0, limits.budget - s.used) * (s.elapsedS / evaluatedThisSession);
  }
  if (byTime === undefined) return byBudget;
  if (byBudget === undefined) return byTime;
  return Math.min(byTime, byBudget);
}
