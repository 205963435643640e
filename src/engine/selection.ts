// Selection policies: which candidate an operator expands next. The engine drafts first (no parent), then
// asks the policy for a parent for every refinement; a policy never returns a candidate the operator has
// already exhausted.
import type { Candidate } from './candidate';
import { scoreOf } from './pairedScore';

export interface SelectionView {
  /** Every candidate so far, baseline first. */
  readonly candidates: readonly Candidate[];
  /** True when `operator` said it has nothing new to offer from `id`. */
  isExhausted(operator: string, id: string): boolean;
  /** How many times `id` was handed to an operator as the parent. */
  expansions(id: string): number;
}

export interface SelectionRequest {
  operator: string;
  /** The operator can repair a failed candidate (an LLM can, the tuner cannot). */
  repairs?: boolean;
}

export interface SelectionPolicy {
  readonly name: string;
  select(view: SelectionView, request: SelectionRequest): Candidate | undefined;
}

function eligible(view: SelectionView, req: SelectionRequest, includeFailed = false): Candidate[] {
  return view.candidates.filter((c) =>
    c.state === 'done'
    && !view.isExhausted(req.operator, c.id)
    && (scoreOf(c) > 0 || (includeFailed && !!req.repairs && c.operator !== 'baseline' && c.verdict?.status !== 'static_rejected')));
}

/** Failures an operator can learn from; a static rejection repeats whatever the operator did not read. */
const REPAIRABLE = new Set(['compile_error', 'incorrect', 'narrow_inputs', 'runtime_error', 'timeout']);

export interface RepairLimits {
  /** Only the last this many judged candidates count as recent. */
  recent: number;
  /** Repair attempts per failed candidate. */
  attempts: number;
  /** A failed repair of a failed repair ... is not repaired again past this depth. */
  depth: number;
}

export const DEFAULT_REPAIR_LIMITS: RepairLimits = { recent: 8, attempts: 1, depth: 2 };

/**
 * The most recent failed candidate that a repairing operator has not tried to fix yet (undefined for an
 * operator that cannot repair). A failure that is fresh carries the compiler's or the checker's exact
 * complaint, which is what a repair prompt needs; older ones are left to the search.
 */
export function repairTarget(view: SelectionView, req: SelectionRequest, limits: RepairLimits = DEFAULT_REPAIR_LIMITS): Candidate | undefined {
  if (!req.repairs) return undefined;
  const byId = new Map(view.candidates.map((c) => [c.id, c]));
  const repairDepth = (c: Candidate): number => {
    let n = 0;
    for (let x: Candidate | undefined = c; x?.mode === 'repair'; x = byId.get(x.parents[0])) n++;
    return n;
  };
  const judged = view.candidates.filter((c) => c.state === 'done' && c.verdict);
  const recent = judged.sort((a, b) => (a.timings.finishedAt ?? 0) - (b.timings.finishedAt ?? 0)).slice(-limits.recent);
  for (let i = recent.length - 1; i >= 0; i--) {
    const c = recent[i];
    if (c.operator === 'baseline' || !REPAIRABLE.has(c.verdict!.status)) continue;
    if (view.isExhausted(req.operator, c.id) || view.expansions(c.id) >= limits.attempts) continue;
    if (repairDepth(c) >= limits.depth) continue;
    return c;
  }
  return undefined;
}

/**
 * Always expand the best correct candidate not yet exhausted (ties: the earlier one); an operator that repairs
 * gets a fresh failure first (each one once), so with the default policy an LLM still sees its own mistakes.
 */
export class GreedyPolicy implements SelectionPolicy {
  readonly name = 'greedy';
  constructor(private readonly repair: RepairLimits = DEFAULT_REPAIR_LIMITS) {}

  select(view: SelectionView, req: SelectionRequest): Candidate | undefined {
    const broken = repairTarget(view, req, this.repair);
    if (broken) return broken;
    let best: Candidate | undefined;
    for (const c of eligible(view, req)) if (!best || scoreOf(c) > scoreOf(best)) best = c;
    return best;
  }
}

/**
 * UCB over the tree's nodes: value = a node's fitness relative to the run's best (0 for a failed node, which
 * only repairing operators may pick), plus an exploration bonus that shrinks as the node is expanded.
 */
export class UcbPolicy implements SelectionPolicy {
  readonly name = 'ucb';
  constructor(private readonly exploration = 0.5) {}

  select(view: SelectionView, req: SelectionRequest): Candidate | undefined {
    const pool = eligible(view, req, true);
    if (!pool.length) return undefined;
    const bestF = Math.max(...view.candidates.map((c) => scoreOf(c)), 1e-9);
    const total = pool.reduce((n, c) => n + view.expansions(c.id), 0);
    let choice: Candidate | undefined;
    let score = -Infinity;
    for (const c of pool) {
      const failedPenalty = scoreOf(c) > 0 ? 0 : 0.25;
      const s = scoreOf(c) / bestF - failedPenalty
        + this.exploration * Math.sqrt(Math.log(total + 2) / (1 + view.expansions(c.id)));
      if (s > score) {
        score = s;
        choice = c;
      }
    }
    return choice;
  }
}

/**
 * Islands: each draft starts an island (the baseline is island 0); the policy visits islands in turn and
 * expands the best of the island, so one early winner does not starve the other structures.
 */
export class IslandPolicy implements SelectionPolicy {
  readonly name = 'islands';
  private turn = 0;
  constructor(private readonly islands = 4) {}

  select(view: SelectionView, req: SelectionRequest): Candidate | undefined {
    const pool = eligible(view, req);
    if (!pool.length) return undefined;
    const byId = new Map(view.candidates.map((c) => [c.id, c]));
    // every draft (a fresh LLM draft, a tuner probe) starts an island; descendants stay on it
    const rootOf = (c: Candidate): Candidate => {
      let node = c;
      while (node.parents.length && node.mode !== 'draft') {
        const p = byId.get(node.parents[0]);
        if (!p) break;
        node = p;
      }
      return node;
    };
    const roots = [...new Set(view.candidates.filter((c) => c.mode === 'draft').map((c) => c.id))];
    const island = (c: Candidate) => {
      const r = rootOf(c);
      const i = r.mode === 'draft' ? roots.indexOf(r.id) + 1 : 0;
      return i % this.islands;
    };
    for (let tries = 0; tries < this.islands; tries++) {
      const want = this.turn++ % this.islands;
      let best: Candidate | undefined;
      for (const c of pool) if (island(c) === want && (!best || scoreOf(c) > scoreOf(best))) best = c;
      if (best) return best;
    }
    return new GreedyPolicy({ ...DEFAULT_REPAIR_LIMITS, attempts: 0 }).select(view, req);
  }
}

export const POLICIES = ['greedy', 'ucb', 'islands'] as const;
export type PolicyName = (typeof POLICIES)[number];

export function createPolicy(name: string): SelectionPolicy {
  switch (name) {
    case 'greedy':
      return new GreedyPolicy();
    case 'ucb':
      return new UcbPolicy();
    case 'islands':
      return new IslandPolicy();
    default:
      throw new Error(`Unknown selection policy "${name}"; use one of ${POLICIES.join(', ')}.`);
  }
}
