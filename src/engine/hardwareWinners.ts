// Winners per hardware: the same kernel evolved on two kinds of host keeps a winner for each. Each stored run
// records its hosts and their `hardware`; the hardware of a run's best is that of the host that judged it.
// From the winners, one launcher that picks per device (CUDA compute capability, the original as the fallback)
// can be written, instead of one hardware's winner overwriting another's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Verdict } from '../contract/verdict';
import { detectKnobs, type KnobValues } from './knobs';
import { pairedScore, scoreInterval, type Interval } from './pairedScore';
import type { RunRecord } from './runStore';
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

/** The candidate's verdict and confirmations as verdicts.jsonl records them (the file alone says what was judged). */
function judgements(dir: string, id: string): { verdict?: Verdict; confirmations: Verdict[] } {
  let text = '';
  try {
    text = fs.readFileSync(path.join(dir, 'verdicts.jsonl'), 'utf8');
  } catch {
    return { confirmations: [] };
  }
  const out: { verdict?: Verdict; confirmations: Verdict[] } = { confirmations: [] };
  for (const line of text.split('\n')) {
    if (!line.includes(`"${id}"`)) continue;
    try {
      const j = JSON.parse(line) as { id: string; verdict?: Verdict; confirmation?: Verdict };
      if (j.id !== id) continue;
      if (j.confirmation) out.confirmations.push(j.confirmation);
      else if (j.verdict) out.verdict = j.verdict;
    } catch {
      // a line cut short by a kill
    }
  }
  return out;
}

/** One candidate of a stored run as a winner of the hardware that judged it (undefined: no such run or candidate). */
export function storedWinner(dir: string, candidateId: string, record = readJson<RunRecord>(path.join(dir, 'run.json'))): HardwareWinner | undefined {
  const meta = readJson<{ operator: string; mode?: string; knobs?: Record<string, unknown>; placement?: { host?: string } }>(
    path.join(dir, 'candidates', `${candidateId}.json`));
  if (!record || !meta) return undefined;
  const host = record.hosts.find((h) => h.name === meta.placement?.host) ?? (record.hosts.length === 1 ? record.hosts[0] : undefined);
  const plain = meta.knobs && Object.values(meta.knobs).every((v) => typeof v === 'number') ? (meta.knobs as KnobValues) : undefined;
  const judged = judgements(dir, candidateId);
  const interval = scoreInterval(judged);
  const speedup = record.best?.id === candidateId ? record.best.speedup : pairedScore(judged);
  return { hardware: host?.hardware ?? 'unknown hardware', runId: record.runId, runDir: dir, candidateId, speedup,
    ...(interval ? { interval } : {}), ...(judged.confirmations.length && interval ? { confirmed: true } : {}),
    operator: meta.operator, mode: meta.mode, knobs: plain, finishedAt: record.updatedAt };
}

/**
 * The best correct candidate per hardware among the runs stored under `runsRoot` (each a folder with run.json)
 * of the same kernel (same source file and function); the most recent run wins a tie. Runs whose hosts name no
 * hardware count as `unknown hardware`.
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
