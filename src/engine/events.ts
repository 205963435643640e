// The engine's typed events. The CLI, the editor and the run store only render / persist these.
import type { Candidate } from './candidate';
import type { InvalidProposal } from './operator';
import type { Verdict } from '../contract/verdict';

export type TerminationReason = 'budget' | 'time' | 'plateau' | 'target' | 'stopped' | 'exhausted' | 'error';

export interface RunSummary {
  runId: string;
  runDir: string;
  candidates: number;
  baseline: Verdict | undefined;
  /** `speedup`: the paired ratio (pairedScore.ts), with its `interval`; `confirmed`: the best was judged again at
   *  the end and `speedup` is the lowest of its measurements. */
  best: { id: string; speedup: number; interval?: [number, number]; operator: string; status: string; confirmed?: boolean } | undefined;
}

export type EngineEvent =
  | { type: 'run-started'; runId: string; runDir: string; specPath: string; kernel: string; resumed: boolean; at: number }
  | { type: 'candidate-proposed'; candidate: Candidate; at: number }
  | { type: 'candidate-started'; id: string; host: string; at: number }
  | { type: 'candidate-evaluated'; candidate: Candidate; at: number }
  /** A speculative candidate made moot by its parent's verdict: taken off the queue (or its evaluation stopped),
   *  never judged; `candidate.cancelled` says why. */
  | { type: 'candidate-cancelled'; candidate: Candidate; at: number }
  | { type: 'best-improved'; id: string; speedup: number; at: number }
  /** A leader judged once more before the run ends; `candidate.score` is now its confirmed score (0: it lost its place). */
  | { type: 'candidate-confirmed'; candidate: Candidate; confirmation: Verdict; at: number }
  | { type: 'proposal-invalid'; invalid: InvalidProposal; at: number }
  | { type: 'progress'; evaluated: number; budget?: number; best: number; etaS?: number; at: number;
      /** Budget units used (proposals, duplicates and invalid answers), evaluations in flight, and the waste. */
      used?: number; inFlight?: number; duplicates?: number; invalid?: number;
      /** Speculative candidates cancelled as moot (counted in `used` unless their unit was given back). */
      cancelled?: number;
      /** The candidate `best` belongs to. */ bestId?: string }
  | { type: 'usage'; promptTokens: number; completionTokens: number; costUsd?: number; at: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; at: number }
  | { type: 'run-finished'; reason: TerminationReason; summary: RunSummary; at: number;
      /** Set when reason is 'error': what failed (a host, the baseline itself, every operator) and why. */
      error?: RunError };

/** What ended a run in an error, and why. */
export interface RunError {
  kind: 'host' | 'baseline' | 'operator';
  message: string;
  /** The candidate that could not be judged (its evaluation failed twice, or once for the baseline): the run
   *  ended without a verdict on it, and `message` says why. */
  candidate?: string;
}

export type EngineEventListener = (event: EngineEvent) => void;
