// A host evaluates candidates: the local machine, an SSH machine, a Slurm partition. The HostPool drives
// hosts and is the engine's Evaluator (src/contract/job.ts); src/remote implements hosts without importing vscode.
import type { EvaluationJob, PoolVerdict } from '../contract/job';
import type { HostCheck } from '../contract/hardware';

/** News from a host about its own machinery (scheduler jobs started, ended, requeues), for progress output. */
export type HostLogListener = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface Host {
  readonly name: string;
  /** How many evaluations may run at once. */
  readonly slots: number;
  /** e.g. `nvidia-h100`, `nvidia-h200`, `cpu-x86`; picks the knowledge notes. */
  readonly hardware?: string;
  /** Judges one candidate; resolves with a verdict (never rejects for the candidate's faults). */
  evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<PoolVerdict>;
  check(): Promise<HostCheck>;
  dispose(): Promise<void>;
  /**
   * The host applies `job.timeoutS` itself, from the moment the evaluation starts (a scheduler's queue may
   * hold a job much longer before that); pools must not time the job out on their own clock.
   */
  readonly enforcesTimeout?: boolean;
  /** Subscribes to the host's news; returns the unsubscribe. Optional: simple hosts have none. */
  onLog?(listener: HostLogListener): () => void;
}

/** The host itself failed (unreachable, died mid-job): the job must be requeued, not judged. */
export class HostUnavailableError extends Error {
  constructor(readonly host: string, message: string) {
    super(message);
    this.name = 'HostUnavailableError';
  }
}
