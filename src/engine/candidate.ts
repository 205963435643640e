// A candidate is one whole source file proposed for the kernel; a run is a graph of candidates.
import type { Placement } from '../contract/job';
import type { Verdict } from '../contract/verdict';

export type CandidateState = 'proposed' | 'queued' | 'evaluating' | 'done';

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
  /** The engine's speedup estimate (pairedScore.ts): the harness's paired ratio, the lowest over the candidate's
   *  evaluations once it is confirmed; what ranks candidates. */
  score?: number;
  /** Verdicts of the candidate judged once more at the end of the run (a leader re-judged against the winner's
   *  curse); its score is then the lowest of its measurements, 0 when one of them is not ok. */
  confirmations?: Verdict[];
  placement?: Placement;
  /** Why the operator proposed it (the LLM's rationale, or the knob values the tuner changed). */
  rationale?: string;
  knobs?: Record<string, number | string>;
  timings: { proposedAt: number; startedAt?: number; finishedAt?: number };
}
