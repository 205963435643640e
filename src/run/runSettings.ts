// What a run is started with, whichever front end starts it: the CLI's flags and the editor's settings both
// become RunSettings here, with one set of defaults. Stored in run.json; a resumed run reuses what it was
// started with, under what is given again.
import type { InputsMode } from '../contract/job';
import { POLICIES, type PolicyName } from '../engine/selection';

export interface RunSettings {
  operators: string[];
  /** Proposals per run; none when only a wall-clock limit is given. */
  budget?: number;
  timeMin?: number;
  policy: PolicyName;
  target?: number;
  plateau?: number;
  seed?: number;
  model?: string;
  /** Host names to use from the config; none: every host. */
  hosts: string[];
  /** The config file (the CLI's --config); the editor hands its config over directly. */
  config?: string;
  draftBudget?: number;
  /** Upper bound on one evaluation, seconds. */
  jobTimeoutS: number;
  profile: boolean;
  /** The harness's `--inputs`: `problem` judges by the spec's inputs alone (no robustness pass). */
  inputs: InputsMode;
}

export const RUN_DEFAULTS = {
  operators: ['tune'],
  budget: 40,
  policy: 'greedy',
  // long enough for a cold Triton compile plus timing on a busy host; catches a hung job
  jobTimeoutS: 900,
  profile: false,
  inputs: 'wide',
} as const satisfies Partial<RunSettings>;

/** `given` over `previous` (the stored run's settings) over the defaults. */
export function resolveRunSettings(given: Partial<RunSettings>, previous: Partial<RunSettings> = {}): RunSettings {
  const pick = <K extends keyof RunSettings>(k: K): RunSettings[K] | undefined => given[k] ?? previous[k];
  const timeMin = pick('timeMin');
  return {
    operators: pick('operators') ?? [...RUN_DEFAULTS.operators],
    // a run limited by time alone has no candidate budget
    budget: pick('budget') ?? (given.timeMin !== undefined ? undefined : RUN_DEFAULTS.budget),
    timeMin,
    policy: isPolicy(pick('policy')) ? pick('policy')! : RUN_DEFAULTS.policy,
    target: pick('target'),
    plateau: pick('plateau'),
    seed: pick('seed'),
    model: pick('model'),
    hosts: pick('hosts') ?? [],
    config: pick('config'),
    draftBudget: pick('draftBudget'),
    jobTimeoutS: pick('jobTimeoutS') ?? RUN_DEFAULTS.jobTimeoutS,
    profile: pick('profile') ?? RUN_DEFAULTS.profile,
    inputs: pick('inputs') ?? RUN_DEFAULTS.inputs,
  };
}

export function isPolicy(name: unknown): name is PolicyName {
  return (POLICIES as readonly unknown[]).includes(name);
}

/** Proposals in flight (generating, waiting, being judged). An LLM answers slowly: twice the slots keeps the
 *  hosts from waiting for it. */
export function pipelineDepth(operators: readonly string[], totalSlots: number): number {
  return operators.includes('llm') ? 2 * totalSlots : totalSlots;
}
