// A candidate is one whole source file proposed for the kernel; a run is a graph of candidates.
import type { Placement } from '../contract/job';
import type { Verdict } from '../contract/verdict';

/** `cancelled`: a speculative candidate whose parent's verdict made it moot (speculation.ts); never judged (its
 *  budget unit stays spent). */
export type CandidateState = 'proposed' | 'queued' | 'evaluating' | 'done' | 'cancelled';

export interface Candidate {
  /** Short stable id within the run: `c0000` is the baseline. */
  id: string;
  parents: string[];
  /** `baseline`, `tune`, `llm` (or a plugin's name). */
  operator: string;
  /** The mode the operator worked in: draft, improve, repair, crossover, tune. */
  mode?: string;
  /** Whole source file. */
  source: string;
  /** Hash of the normalized source; identical candidates are evaluated once. */
  hash: string;
  state: CandidateState;
  verdict?: Verdict;
  /** The engine's speedup estimate (pairedScore.ts): the harness's paired ratio; once it is confirmed, the
   *  geometric mean of its confirmations (from `figureFrom` on); what ranks candidates. */
  score?: number;
  /** Verdicts of the candidate judged again at the end of the run (a contender re-judged against the winner's
   *  curse); its score then comes from them, 0 when any evaluation of it is not ok. */
  confirmations?: Verdict[];
  /** The run's settled leader: its figure comes from the confirmations from this index on, those judged after the
   *  ranking picked it (the ones that picked it are biased upward, as a first figure is). */
  figureFrom?: number;
  placement?: Placement;
  /** Why the operator proposed it (the LLM's rationale, or the knob values the tuner changed). */
  rationale?: string;
  knobs?: Record<string, number | string>;
  /** Proposed from a parent whose verdict was not in yet (speculation.ts). */
  speculative?: boolean;
  /** Why it was cancelled (state `cancelled`). */
  cancelled?: string;
  timings: { proposedAt: number; startedAt?: number; finishedAt?: number };
}
