// What the harness's job runner answers for one job (`python3 -m kernelevolve_harness run-job`, the envelope in
// docs/harness.md), read the same way by every host: local, SSH and Slurm. Checked field by field, never cast:
// a host that gets anything else reports the harness's failure instead of passing a malformed verdict on.
import type { Machine } from './hardware';
import type { ShapeTiming, Verdict } from './verdict';
import { VERDICT_STATUSES } from './verdict';

/** Where the runner ran the job: the machine, the device, the timing lock it named. */
export interface RunnerPlace {
  node?: string;
  device?: string;
  /** What judged it, named as `hosts --check` names it. */
  machine?: Machine;
  /** The machine-wide timing lock file of the device. */
  lock?: string;
  /** The runner's own time for the job, ms. */
  elapsedMs?: number;
}

export type JobAnswer =
  | ({ outcome: 'verdict'; verdict: Verdict } & RunnerPlace)
  /** The spec is wrong: the user's error; `message` says what to fix. */
  | ({ outcome: 'spec_error'; message: string } & RunnerPlace)
  /** The harness itself failed (not the candidate): `message` says what to check on the host. */
  | ({ outcome: 'harness_error'; message: string; log?: string } & RunnerPlace)
  /** The job was stopped on request before it had a verdict. */
  | ({ outcome: 'cancelled' } & RunnerPlace);

export class MalformedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedAnswerError';
  }
}

type Fields = Record<string, unknown>;

function isObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalNumber(o: Fields, key: string, where: string): void {
  if (o[key] !== undefined && o[key] !== null && typeof o[key] !== 'number') {
    throw new MalformedAnswerError(`${where}: "${key}" is ${typeof o[key]}, not a number`);
  }
}

function shapeTiming(v: unknown, i: number): ShapeTiming {
  const where = `the verdict's shapes[${i}]`;
  if (!isObject(v) || !isObject(v.shape)) throw new MalformedAnswerError(`${where} is not an object with a shape`);
  for (const key of ['baseline_ms', 'candidate_ms', 'speedup']) {
    // The harness writes a non-finite number as null (JSON has no Infinity).
    if (v[key] !== null && typeof v[key] !== 'number') throw new MalformedAnswerError(`${where}: "${key}" is not a number`);
  }
  return v as unknown as ShapeTiming;
}

/** A verdict object as the harness prints it, checked: status, reason, and the types of what the engine reads. */
export function parseVerdict(value: unknown): Verdict {
  if (!isObject(value)) throw new MalformedAnswerError('the verdict is not a JSON object');
  if (typeof value.status !== 'string' || !(VERDICT_STATUSES as readonly string[]).includes(value.status)) {
    throw new MalformedAnswerError(`the verdict's status ${JSON.stringify(value.status)} is none of ${VERDICT_STATUSES.join(', ')}`);
  }
  if (typeof value.reason !== 'string') throw new MalformedAnswerError('the verdict has no reason sentence');
  optionalNumber(value, 'speedup', 'the verdict');
  if (value.shapes !== undefined && value.shapes !== null) {
    if (!Array.isArray(value.shapes)) throw new MalformedAnswerError('the verdict\'s shapes is not a list');
    value.shapes.forEach(shapeTiming);
  }
  for (const key of ['compile', 'profile', 'timing']) {
    if (value[key] !== undefined && value[key] !== null && !isObject(value[key])) {
      throw new MalformedAnswerError(`the verdict's ${key} is not an object`);
    }
  }
  if (value.log !== undefined && value.log !== null && typeof value.log !== 'string') {
    throw new MalformedAnswerError('the verdict\'s log is not text');
  }
  return value as Verdict;
}

function place(o: Fields): RunnerPlace {
  const p: RunnerPlace = {};
  if (typeof o.node === 'string') p.node = o.node;
  if (typeof o.device === 'string') p.device = o.device;
  if (typeof o.lock === 'string' && o.lock) p.lock = o.lock;
  if (isObject(o.machine)) {
    const m: Machine = {};
    if (typeof o.machine.cpu === 'string' && o.machine.cpu) m.cpu = o.machine.cpu;
    if (typeof o.machine.gpu === 'string' && o.machine.gpu) m.gpu = o.machine.gpu;
    if (m.cpu || m.gpu) p.machine = m;
  }
  if (typeof o.elapsed_ms === 'number') p.elapsedMs = o.elapsed_ms;
  return p;
}

/** The runner's envelope (an object, or the line of JSON it printed), checked. */
export function parseJobAnswer(value: unknown): JobAnswer {
  let v = value;
  if (typeof v === 'string') {
    const lines = v.trim().split('\n');
    try {
      v = JSON.parse(lines[lines.length - 1] ?? '');
    } catch {
      throw new MalformedAnswerError('the job runner printed no JSON envelope');
    }
  }
  if (!isObject(v) || v.envelope !== 1) throw new MalformedAnswerError('the answer is not a job runner envelope (version 1)');
  const where = place(v);
  switch (v.outcome) {
    case 'verdict':
      return { outcome: 'verdict', verdict: parseVerdict(v.verdict), ...where };
    case 'spec_error':
    case 'harness_error':
      if (typeof v.message !== 'string' || !v.message) throw new MalformedAnswerError(`a ${v.outcome} envelope without a message`);
      return v.outcome === 'spec_error'
        ? { outcome: 'spec_error', message: v.message, ...where }
        : { outcome: 'harness_error', message: v.message, ...(typeof v.log === 'string' ? { log: v.log } : {}), ...where };
    case 'cancelled':
      return { outcome: 'cancelled', ...where };
    default:
      throw new MalformedAnswerError(`the envelope's outcome ${JSON.stringify(v.outcome)} is unknown`);
  }
}
