// One evaluation as every layer sees it: the job the engine hands over, where it ran, and what came back.
// The engine asks an Evaluator; src/remote's HostPool is one. Imports nothing but the verdict.
import type { Machine } from './hardware';
import type { Verdict } from './verdict';

/** Which inputs the harness judges on: `wide` (its default) adds a robustness pass on signed, larger inputs where
 *  the spec draws narrow ones (a candidate wrong only there is `narrow_inputs`); `problem` judges by the spec's
 *  inputs alone, as KernelBench does, for comparisons with published figures. */
export const INPUT_MODES = ['wide', 'problem'] as const;
export type InputsMode = (typeof INPUT_MODES)[number];

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
  /** `problem`: no robustness pass (the harness's `--inputs problem`); default `wide`. */
  inputs?: InputsMode;
  /** Upper bound for the whole evaluation, seconds (the harness has its own per-stage timeouts). */
  timeoutS?: number;
  /** The share of the device's memory the evaluation plans within (0 < share <= 1; default the whole device):
   *  evaluations judged side by side on one device (`kernelevolve suite --jobs`). */
  memoryShare?: number;
  /** A re-judgement (a leader's confirmation or figure, judged beside the search): evaluations waiting for the
   *  device's timing lock without it take it first (the harness's `--background`). */
  background?: boolean;
}

/** Where a job actually ran, for the run store and the UI. */
export interface Placement {
  host: string;
  /** Device ordinal(s) the job was given (CUDA_VISIBLE_DEVICES), when the host has devices. */
  device?: string;
  /** Scheduler job id and node, for Slurm. */
  jobId?: string;
  node?: string;
  /** The machine-wide timing lock of the device, as the harness's job runner named it. */
  lock?: string;
  /** What judged it (CPU model and cores, GPU), as `hosts --check` names it. */
  machine?: Machine;
}

/** A verdict with the place it was obtained. */
export type PoolVerdict = Verdict & { placement?: Placement };

export interface PoolJobOptions {
  signal?: AbortSignal;
  /** Called when a host takes the job (again, if it is requeued). */
  onStart?: (host: string) => void;
}

/** What judges candidates: a HostPool, or anything with the same shape. */
export interface Evaluator {
  readonly totalSlots: number;
  /** The hardware the jobs run on (e.g. `nvidia-h100`), for the knowledge notes. */
  readonly hardware?: string;
  evaluate(job: EvaluationJob, opts?: PoolJobOptions): Promise<PoolVerdict>;
}
