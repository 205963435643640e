// Winners per hardware: the same kernel evolved on two kinds of host keeps a winner for each. Each stored run
// records its hosts and their `hardware`; the hardware of a run's best is that of the host that judged it, or,
// where its config named none, the machine that judged it (its CPU for a C++ kernel, else its GPU) as the harness
// names it in the verdict's envelope and `kernelevolve hosts --check` does.
// From the winners, one launcher that picks per device (CUDA compute capability, the original as the fallback)
// can be written, instead of one hardware's winner overwriting another's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { machineHardware } from '../contract/hardware';
import { isConfirmed } from './candidateStore';
import { detectKnobs, type KnobValues } from './knobs';
import { scoreInterval, scoreOf, type Interval } from './pairedScore';
import { storedCandidate, type RunRecord } from './runStore';
import { cudaCapabilityOf, writeDispatch, type DispatchResult } from './tunedDispatch';

export interface HardwareWinner {
  hardware: string;
  runId: string;
  runDir: string;
  candidateId: string;
  speedup: number;
  /** The score's 95% interval (that of the evaluation the score comes from). */
  interval?: Interval;
  /** Judged again at the end of its run and correct every time. */
  confirmed?: boolean;
  operator: string;
  mode?: string;
  /** The tuner's knob values, when the winner is a plain tuned setting. */
  knobs?: KnobValues;
  finishedAt: string;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** One candidate of a stored run as a winner of the hardware that judged it (undefined: no such run or candidate).
 *  Its figure and interval are those the editor shows for it everywhere else (the lens, the run's table): the
 *  same scoring of the same stored candidate, its figure from the confirmations after it was picked. */
export function storedWinner(dir: string, candidateId: string, record = readJson<RunRecord>(path.join(dir, 'run.json'))): HardwareWinner | undefined {
  const c = storedCandidate(dir, candidateId);
  if (!record || !c) return undefined;
  const host = record.hosts.find((h) => h.name === c.placement?.host) ?? (record.hosts.length === 1 ? record.hosts[0] : undefined);
  const plain = c.knobs && Object.values(c.knobs).every((v) => typeof v === 'number') ? (c.knobs as KnobValues) : undefined;
  const interval = scoreInterval(c);
  // A host's configured `hardware` names it; else the machine that judged it, as `hosts --check` names it.
  const hardware = host?.hardware ?? machineHardware(c.placement?.machine, record.spec.backend) ?? 'unknown hardware';
  return { hardware, runId: record.runId, runDir: dir, candidateId, speedup: scoreOf(c),
    ...(interval ? { interval } : {}), ...(isConfirmed(c) ? { confirmed: true } : {}),
    operator: c.operator, mode: c.mode, knobs: plain, finishedAt: record.updatedAt };
}

/**
 * The best correct candidate per hardware among the runs stored under `runsRoot` (each a folder with run.json)
 * of the same kernel (same source file and function); the most recent run wins a tie. A winner judged where
 * neither the host's config nor the harness named the hardware counts as `unknown hardware`.
 */
export function hardwareWinners(runsRoot: string, kernel: { sourcePath: string; kernel: string }): HardwareWinner[] {
  let dirs: string[];
  try {
    dirs = fs.readdirSync(runsRoot).map((d) => path.join(runsRoot, d)).filter((d) => fs.existsSync(path.join(d, 'run.json')));
  } catch {
    return [];
  }
  const best = new Map<string, HardwareWinner>();
  for (const dir of dirs) {
    const record = readJson<RunRecord>(path.join(dir, 'run.json'));
    if (!record?.best || record.spec.sourcePath !== kernel.sourcePath || record.spec.kernel !== kernel.kernel) continue;
    if (record.best.id === 'c0000' || record.best.status !== 'ok' || !(record.best.speedup > 1)) continue;
    const w = storedWinner(dir, record.best.id, record);
    if (!w) continue;
    const held = best.get(w.hardware);
    if (!held || w.speedup > held.speedup || (w.speedup === held.speedup && w.finishedAt > held.finishedAt)) best.set(w.hardware, w);
  }
  return [...best.values()].sort((a, b) => a.hardware.localeCompare(b.hardware));
}

/**
 * The baseline with a launcher that picks each hardware's winning setting by the device's compute capability
 * (the original computation on any other device). Only tuned settings can be tabled; a winner that rewrote
 * code (an LLM's) or runs on hardware without a known capability is left out, and said so.
 */
export function deviceDispatch(baselineSource: string, fileName: string, winners: HardwareWinner[]): DispatchResult & { left: string[] } {
  const left: string[] = [];
  const entries = [];
  for (const w of winners) {
    const capability = cudaCapabilityOf(w.hardware);
    if (!capability) left.push(`${w.hardware}: no CUDA compute capability known for it`);
    else if (!w.knobs) left.push(`${w.hardware}: its winner (${w.candidateId} of ${w.runId}) is not a tuned setting`);
    else entries.push({ capability, values: w.knobs });
  }
  if (!entries.length) return { error: 'no winner can be chosen by device', left };
  return { ...writeDispatch(baselineSource, detectKnobs(baselineSource, fileName), entries), left };
}
