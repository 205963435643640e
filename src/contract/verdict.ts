// The harness's verdict on one candidate, exactly as `kernelevolve_harness evaluate --json` prints it
// (the contract in docs/harness.md). Everything that reads verdicts reads this type; it imports nothing.

export const VERDICT_STATUSES = [
  'ok',
  'static_rejected',
  'compile_error',
  'runtime_error',
  'incorrect',
  /** Right on the spec's own inputs, wrong on the wider ones the harness also judges where those are narrow
   *  (all in [0, 1), all non-negative): never a winner; `--inputs problem` judges by the spec's inputs alone. */
  'narrow_inputs',
  'timeout',
] as const;
export type VerdictStatus = (typeof VERDICT_STATUSES)[number];

export interface ShapeTiming {
  shape: Record<string, unknown>;
  baseline_ms: number;
  candidate_ms: number;
  speedup: number;
  /** The paired ratio's 95% interval (a bootstrap over the interleaved rounds). */
  interval?: [number, number];
  /** Timed passes of the shape, when it was timed again (a wide interval, or a disagreement). */
  passes?: number;
  /** Why each timed pass stopped: `precise`, `far below` (wholly under half the baseline's speed, within its
   *  looser goal), `ceiling: ...`, `floor`. */
  stops?: string[];
  /** Timed calls, picked at random among the passes' rounds, whose outputs were checked (two a pass; the last
   *  sample's calls and a call on fresh inputs are checked besides). */
  spot_checks?: number;
  /** KernelBench's own eager timing of the shape (KernelBench problems; reported, never judged). */
  kernelbench?: KernelBenchTiming;
}

/** KernelBench's timing of ModelNew and Model (harness kernelbench_timing.py): eager calls, each after an L2 flush,
 *  CUDA events (GPU) or wall clock (CPU), the ratio of the means; over shapes, geometric means. */
export interface KernelBenchTiming {
  speedup: number;
  baseline_ms: number;
  candidate_ms: number;
  trials: number;
  /** `cuda_event` | `host_time`, KernelBench's names (on the verdict, not on a shape). */
  method?: string;
}

/** What the harness learned about the candidate's kernel (and, when asked, its profile). */
export interface Profile {
  /** `memory-bound` | `compute-bound` | `latency-bound` | `unknown` */
  bottleneck?: string;
  [metric: string]: unknown;
}

export interface Verdict {
  status: VerdictStatus;
  /** One human sentence. */
  reason: string;
  /** Geometric mean of the per-shape speedups (each a paired ratio); present when status is ok. */
  speedup?: number;
  /** The geometric mean's 95% interval, from the same resamples as the shapes' intervals. */
  speedup_interval?: [number, number];
  shapes?: ShapeTiming[];
  compile?: Record<string, unknown>;
  profile?: Profile;
  /** KernelBench's own eager timing beside the harness's ratio (KernelBench problems). */
  kernelbench?: KernelBenchTiming;
  /** Sentences about the evaluation that do not change its status (where KernelBench's timing disagrees). */
  notes?: string[];
  /** How the shapes were timed: method, estimator, the timing lock and when it was held, the clean reference
   *  process's timing of the baseline (`clean_baseline`), ... (docs/harness.md). Present when status is ok. */
  timing?: Record<string, unknown>;
  /** Seconds spent in each stage of the evaluation (`compile_s`, `timing_s`, ..., `total_s`). */
  stages?: Record<string, number>;
  /** How each of the harness's processes was started: `shared (reused)`, `warm`, `cold (why)`. */
  workers?: Record<string, string>;
  /** Compiler / runtime text, truncated. */
  log?: string;
  /** Filled in by the host that ran the evaluation (not by the harness). */
  host?: string;
  /** Wall-clock time of the whole evaluation on the host, ms (filled in by the host). */
  wall_ms?: number;
  [extra: string]: unknown;
}

export function isVerdict(value: unknown): value is Verdict {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.status === 'string' && (VERDICT_STATUSES as readonly string[]).includes(v.status)
    && typeof v.reason === 'string';
}

/** " (1.08-1.12)": a speedup's 95% interval as the CLI and the panel print it, to two decimals; '' when there is
 *  none or it rounds to the figure itself (a point, not an interval). */
export function intervalText(figure: number, interval: readonly number[] | undefined): string {
  if (!Array.isArray(interval) || interval.length !== 2 || !interval.every((x) => typeof x === 'number' && Number.isFinite(x))) return '';
  const [lo, hi, f] = [interval[0].toFixed(2), interval[1].toFixed(2), figure.toFixed(2)];
  return lo === f && hi === f ? '' : ` (${lo}-${hi})`;
}
