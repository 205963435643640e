// A host evaluates candidates: the local machine, an SSH machine, a Slurm partition. The engine sees only
// this interface; src/remote implements it without importing vscode.
import type { Verdict } from '../engine/verdict';

export interface EvaluationJob {
  /** Unique per evaluation (the candidate id, or a fresh id for one-off evaluations). */
  id: string;
  /** Absolute local path of the spec file. */
  specPath: string;
  /** Absolute local path of the baseline source (the spec's SOURCE unless overridden). */
  baselinePath: string;
  /** The candidate's whole source file. */
  candidateSource: string;
  /** File name to give the candidate (keeps the extension: .py, .cu, .cpp). */
  candidateFileName: string;
  /** Ask the harness for `--profile`. */
  profile?: boolean;
  /** Upper bound for the whole evaluation, seconds (the harness has its own per-stage timeouts). */
  timeoutS?: number;
}

/** Where a job actually ran, for the run store and the UI. */
export interface Placement {
  host: string;
  /** Device ordinal(s) the job was given (CUDA_VISIBLE_DEVICES), when the host has devices. */
  device?: string;
  /** Scheduler job id and node, for Slurm. */
  jobId?: string;
  node?: string;
}

export interface HostCheck {
  host: string;
  reachable: boolean;
  /** Free-form facts for the table: python, compiler, gpu, torch, triton, ... */
  facts: Record<string, string>;
  error?: string;
}

/** News from a host about its own machinery (scheduler jobs started, ended, requeues), for progress output. */
export type HostLogListener = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface Host {
  readonly name: string;
  /** How many evaluations may run at once. */
  readonly slots: number;
  /** e.g. `nvidia-h100`, `nvidia-h200`, `cpu-x86`; picks the knowledge notes. */
  readonly hardware?: string;
  /** Judges one candidate; resolves with a verdict (never rejects for the candidate's faults). */
  evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<Verdict & { placement?: Placement }>;
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
