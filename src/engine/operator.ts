// Operators propose candidates. The engine hands each one the run so far and asks for proposals.
import type { Candidate } from './candidate';
import type { KernelSpec } from './spec';

export interface Proposal {
  /** The whole file (already spliced into the original). */
  source: string;
  parents: string[];
  operator: string;
  mode?: string;
  rationale?: string;
  knobs?: Record<string, number | string>;
}

export interface ProposalContext {
  spec: KernelSpec;
  /** The baseline source file as it stands. */
  baselineSource: string;
  /** Every candidate so far, in creation order (the baseline first). */
  candidates: readonly Candidate[];
  /** The candidate the selection policy chose to expand (absent for fresh drafts). */
  parent?: Candidate;
  /** A second parent, for crossover. */
  other?: Candidate;
  /** Hardware of the hosts in use, for knowledge retrieval. */
  hardware?: string;
  /** Hashes of sources already proposed (evaluated or queued) in this run. */
  seen: ReadonlySet<string>;
  /** The run keeps a unit of its budget for the operators' closing proposals (`Operator.conclude`). */
  concludes?: boolean;
}

/** An answer that could not be turned into a candidate (garbled LLM output, say): counted and shown. */
export interface InvalidProposal {
  operator: string;
  reason: string;
  raw?: string;
}

export interface ProposalBatch {
  proposals: Proposal[];
  invalid?: InvalidProposal[];
  /** Token usage and cost, for LLM operators. */
  usage?: { promptTokens: number; completionTokens: number; costUsd?: number };
  /** True when this operator has nothing new to offer from this parent (the tuner exhausted it). */
  exhausted?: boolean;
}

export interface Operator {
  readonly name: string;
  /** The operator can turn a failed candidate into a working one, so policies may hand it failed parents. */
  readonly repairs?: boolean;
  /** How many propose() calls may run at once (default: as many as the pipeline holds). An operator whose
   *  answer depends on what it proposed just before (the tuner) says 1, so it never repeats itself. */
  readonly concurrency?: number;
  /** The operator can work from a parent whose verdict is not in yet (its source is enough), so the scheduler may
   *  hand it a pending candidate to keep every slot busy (speculation.ts). */
  readonly speculates?: boolean;
  propose(ctx: ProposalContext, signal?: AbortSignal): Promise<ProposalBatch>;
  /** The run's closing proposals, asked for when everything else is judged, and again (at most twice in all:
   *  evolutionRun's CLOSING_ROUNDS) while the last round brought some (the tuner: per-shape tables from the whole
   *  run's evaluations). A run keeps one unit of its budget for them. */
  conclude?(ctx: ProposalContext, signal?: AbortSignal): Promise<ProposalBatch>;
}
