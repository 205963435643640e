// Speculation: proposing from a parent whose verdict is not in yet, so a search whose judged candidates' next
// steps are used up (or lead nowhere new) still keeps every slot busy instead of waiting for a wave of verdicts.
// A pending candidate is estimated at its parent's score times what a step has been worth in this run (the median
// of judged children's scores over their parents', at most 1; a draft just above its parent: drafts are proposed
// because the start is assumed poor; a baseline still being judged counts 1), and it is expanded when that
// estimate beats the policy's pick. Early in a run steps pay and the pending are expanded ahead of the judged; on
// a plateau most steps lose, and a judged pick nearly as good is expanded instead (in speculation.test.ts's model
// of the softmax example on a plateau, two minutes of 12 slots: 268 candidates judged and 2 stopped, against 89
// judged and 117 stopped when every pending child of the best came first). When the parent's verdict comes in
// and makes its speculative children moot, they are cancelled: taken off the queue or stopped, never judged.
// Their budget units come back up to a quarter of the budget (REFUND_SHARE in proposalScheduler.ts): a small budget
// (20% of a grid's points) can lose a third of its units to moot children, and so judge few settings around the
// draft that paid (bench:replay, a held-out log-softmax's recorded grid, budget 14, 5 cancelled a run: 2 of 10
// orders of verdicts reach 98% of the grid's best with a quarter back, none with none back). Every unit back would
// start waves of refills after the others are judged, which on a host whose time goes into compiling and checking
// costs more than the speculation saved (in the same model, budget 20: 33-45 s with every unit back, 21-26 s with
// none, 27 s waiting); a quarter costs the one-wave test 0.9 s (17.5 s).
import type { Candidate } from './candidate';
import { scoreInterval, scoreOf } from './pairedScore';
import { shapeWinners } from './shapeWinners';

/** A candidate proposed but not judged yet. */
export function isPending(c: Candidate): boolean {
  return c.state === 'queued' || c.state === 'evaluating' || c.state === 'proposed';
}

/** Judged steps needed before their median discounts a pending candidate's estimate. */
export const STEPS_BEFORE_DISCOUNT = 4;

/** How far below the run's best a judged parent may be and its speculative children still be worth judging. */
export const MOOT_BELOW_BEST = 0.9;

export interface SpeculationView {
  readonly candidates: readonly Candidate[];
  isExhausted(id: string): boolean;
  expansions(id: string): number;
}

/** What a pending candidate's parent is worth as an estimate: its score once judged; the baseline, while it is
 *  still being judged against itself, 1 (drafts are proposed beside it); anything else pending, nothing (only one
 *  level of speculation). */
function estimateOf(parent: Candidate | undefined): number {
  if (!parent) return 0;
  if (parent.state === 'done') return scoreOf(parent);
  return parent.operator === 'baseline' && isPending(parent) ? 1 : 0;
}

/**
 * The parent to expand: the policy's pick, or a pending candidate of this operator whose estimate (its judged
 * parent's score, times stepWorth) beats it. Only one level deep: a pending candidate whose own parent is pending is not expanded.
 */
export function speculativeParent(view: SpeculationView, operator: string, pick: Candidate | undefined): Candidate | undefined {
  const byId = new Map(view.candidates.map((c) => [c.id, c]));
  const step = stepWorth(view.candidates, byId, operator);
  let best: { c: Candidate; estimate: number } | undefined;
  for (const c of view.candidates) {
    if (!isPending(c) || c.operator !== operator || c.mode === 'dispatch' || view.isExhausted(c.id)) continue;
    const parentScore = estimateOf(byId.get(c.parents[0]));
    if (parentScore <= 0) continue;
    const estimate = parentScore * (c.mode === 'draft' ? 1 + 1e-9 : step);
    // the best estimate; among equals the one expanded least (whichever of them wins, some of its neighbours are
    // already in flight), then the earliest
    if (!best || estimate > best.estimate
      || (estimate === best.estimate && view.expansions(c.id) < view.expansions(best.c.id))) best = { c, estimate };
  }
  if (!best) return pick ?? pendingBaseline(view);
  return !pick || best.estimate > scoreOf(pick) ? best.c : pick;
}

/** What one of this operator's steps has been worth so far: the median, over its judged children of judged
 *  parents (drafts and per-shape tables aside), of the child's score over its parent's (a failed child counts 0);
 *  at most 1, and 1 until STEPS_BEFORE_DISCOUNT are judged. */
export function stepWorth(candidates: readonly Candidate[], byId: ReadonlyMap<string, Candidate>, operator: string): number {
  const ratios: number[] = [];
  for (const c of candidates) {
    if (c.state !== 'done' || c.operator !== operator || c.mode === 'draft' || c.mode === 'dispatch') continue;
    const parent = byId.get(c.parents[0]);
    const p = parent && parent.state === 'done' ? scoreOf(parent) : 0;
    if (p > 0) ratios.push(scoreOf(c) / p);
  }
  if (ratios.length < STEPS_BEFORE_DISCOUNT) return 1;
  ratios.sort((a, b) => a - b);
  const m = ratios.length >> 1;
  return Math.min(1, ratios.length % 2 ? ratios[m] : (ratios[m - 1] + ratios[m]) / 2);
}

/** The baseline while it is judged against itself, when nothing else can be expanded yet: its neighbours need its
 *  source, not its verdict (an operator without drafts, such as the tuner on C++ knobs, starts from them). */
function pendingBaseline(view: SpeculationView): Candidate | undefined {
  const base = view.candidates.find((c) => c.operator === 'baseline');
  return base && isPending(base) && !view.isExhausted(base.id) ? base : undefined;
}

/**
 * Why the speculative children of `judged` are moot now that its verdict is in (undefined: they are still worth
 * judging): it is not correct; it is a step slower than the candidate it came from (its interval's upper end below
 * that one's score); or it is far below the run's best and fastest on no shape (greedy search does not return
 * there, and per-shape search starts only from shape winners).
 * A draft is not a step: it jumps to another region of the space (a block a sixth in from an end of its domain,
 * with warps to match), and its children are its region's first neighbours. One reading below the start says
 * little of them (on the H200, a cross-entropy's 4096-element draft read 0.90x on 32 warps, its children on 16 and 8
 * warps 1.29x and 1.44x), so only a failing draft, or one far below the run's best, makes them moot.
 */
export function mootReason(judged: Candidate, candidates: readonly Candidate[]): string | undefined {
  const f = scoreOf(judged);
  if (f <= 0) return `its parent ${judged.id} is ${judged.verdict?.status ?? 'not correct'}`;
  const parent = candidates.find((c) => c.id === judged.parents[0]);
  const upper = scoreInterval(judged)?.[1] ?? f;
  if (judged.mode !== 'draft' && parent && parent.state === 'done' && upper < scoreOf(parent)) {
    return `its parent ${judged.id} (${f.toFixed(3)}x) turned out slower than ${parent.id} (${scoreOf(parent).toFixed(3)}x), which it came from`;
  }
  const best = Math.max(...candidates.filter((c) => c.state === 'done').map((c) => scoreOf(c)));
  if (upper < MOOT_BELOW_BEST * best) {
    const { winners } = shapeWinners(candidates, (c) => c.operator === judged.operator || c.operator === 'baseline');
    if (!winners.some((w) => w.candidate === judged)) {
      return `its parent ${judged.id} (${f.toFixed(3)}x) is far below the run's best (${best.toFixed(3)}x) and fastest on no shape`;
    }
  }
  return undefined;
}

/** The pending speculative children of `judged` that its verdict made moot, each with the reason. */
export function mootChildren(judged: Candidate, candidates: readonly Candidate[]): Array<{ candidate: Candidate; reason: string }> {
  const children = candidates.filter((c) => c.speculative && isPending(c) && c.parents[0] === judged.id);
  if (!children.length) return [];
  const reason = mootReason(judged, candidates);
  return reason ? children.map((candidate) => ({ candidate, reason })) : [];
}
