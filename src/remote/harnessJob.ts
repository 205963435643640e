// What every host sends the harness's job runner (`run-job`, harness/kernelevolve_harness/job_runner.py) and
// how it reads the answer: the job JSON is built here once, and the envelope is checked by the contract's one
// parser. Hosts only move these bytes; the runner owns the timing lock, the timeout and its verdict, and cleanup.
import type { EvaluationJob, Placement, PoolVerdict } from '../contract/job';
import { SpecError, type Toolchain } from '../contract/spec';
import type { RunnerPlace } from '../contract/verdictEnvelope';
import { MalformedAnswerError, parseJobAnswer } from '../contract/verdictEnvelope';

/** A job as the runner reads it (job_runner.py documents each field). */
export interface RunnerJob {
  spec: string;
  candidate_source: string;
  candidate_name: string;
  baseline?: string;
  baseline_source?: string;
  baseline_name?: string;
  profile?: boolean;
  /** Absent: "wide", the runner's default. */
  inputs?: 'problem';
  device?: string;
  timeout_s?: number;
  toolchain?: Toolchain;
  memory_share?: number;
  background?: boolean;
}

/** The runner's job for `job`, with the spec and baseline as the host sees them. */
export function runnerJob(job: EvaluationJob, where: {
  spec: string;
  /** Path of the baseline on the host; or its text, when it is not there. */
  baseline?: string;
  baselineSource?: { name: string; text: string };
  device?: string;
  /** The host's toolchain (custom backend). */
  toolchain?: Toolchain;
}): RunnerJob {
  const r: RunnerJob = { spec: where.spec, candidate_source: job.candidateSource, candidate_name: job.candidateFileName };
  if (where.baselineSource) {
    r.baseline_source = where.baselineSource.text;
    r.baseline_name = where.baselineSource.name;
  } else if (where.baseline) {
    r.baseline = where.baseline;
  }
  if (job.profile) r.profile = true;
  if (job.inputs === 'problem') r.inputs = 'problem';
  if (where.device !== undefined) r.device = where.device;
  if (job.timeoutS) r.timeout_s = job.timeoutS;
  if (where.toolchain) r.toolchain = where.toolchain;
  if (job.memoryShare !== undefined && job.memoryShare < 1) r.memory_share = job.memoryShare;
  if (job.background) r.background = true;
  return r;
}

/** Stopped on request: the caller's abort reason is what it sees. */
export class JobCancelledError extends Error {
  constructor(host: string) {
    super(`The evaluation on ${host} was cancelled.`);
    this.name = 'AbortError';
  }
}

/**
 * The verdict in the runner's answer, filled in with where it ran. A wrong spec throws SpecError with the
 * harness's sentence; a harness that failed (or answered anything but an envelope) throws an Error that says what
 * to check on the host: neither is the candidate's verdict.
 */
export function verdictFromAnswer(answer: unknown, host: string, extra: Partial<Placement> = {}, stderr = ''): PoolVerdict {
  let parsed;
  try {
    parsed = parseJobAnswer(answer);
  } catch (e) {
    if (!(e instanceof MalformedAnswerError)) throw e;
    const text = (stderr || (typeof answer === 'string' ? answer : '')).trim().slice(-1500);
    throw new Error(`The harness on ${host} did not answer with a verdict (${e.message}). Check that Python 3.9+ with numpy is installed there.${text ? `\n${text}` : ''}`);
  }
  switch (parsed.outcome) {
    case 'spec_error':
      throw new SpecError(parsed.message);
    case 'harness_error':
      throw new Error(`${parsed.message}${parsed.log ? `\n${parsed.log.slice(-2000)}` : ''}`);
    case 'cancelled':
      throw new JobCancelledError(host);
    case 'verdict':
      return { ...parsed.verdict, host, harness_ms: parsed.elapsedMs, placement: placement(host, parsed, extra) };
  }
}

function placement(host: string, place: RunnerPlace, extra: Partial<Placement>): Placement {
  const p: Placement = { host, ...extra };
  if (place.device !== undefined) p.device ??= place.device;
  if (place.node) p.node ??= place.node;
  if (place.lock) p.lock = place.lock;
  if (place.machine) p.machine = place.machine;
  return p;
}
