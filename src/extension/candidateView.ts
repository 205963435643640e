// A candidate as the panel's details pane shows it: the verdict's numbers picked out of the harness's
// compile and profile sections (whatever backend wrote them), the diff against the baseline coloured.
import * as path from 'node:path';
import type { Candidate } from '../engine/candidate';
import type { Verdict } from '../contract/verdict';
import type { CandidateDetails, ProfileFacts } from '../protocol';
import { highlightedDiff } from './diffHighlighter';
import { confirmationOf } from './runState';
import { scoreInterval, scoreOf, verdictInterval } from '../engine/pairedScore';

/** Names the harness (and Nsight Compute) use for the same quantity. */
const ALIASES: Record<Exclude<keyof ProfileFacts, 'other' | 'bottleneck'>, string[]> = {
  registers: ['n_regs', 'registers', 'registers_per_thread', 'launch__registers_per_thread', 'regs'],
  spills: ['n_spills', 'spills', 'spill_stores', 'spill_bytes'],
  sharedMemoryBytes: ['shared', 'shared_bytes', 'smem', 'smem_bytes', 'shared_memory', 'launch__shared_mem_per_block_static'],
  occupancyPct: ['achieved_occupancy_pct', 'achieved_occupancy', 'occupancy', 'occupancy_pct', 'sm__warps_active.avg.pct_of_peak_sustained_active'],
  intensity: ['arithmetic_intensity', 'intensity', 'flops_per_byte'],
  achievedGflops: ['achieved_gflops', 'gflops'],
  achievedGBps: ['gbytes_per_s', 'achieved_gbps', 'gbps', 'bandwidth_gbps'],
};

function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v.replace(/,/g, '')))) return Number(v.replace(/,/g, ''));
  return undefined;
}

function flatten(obj: Record<string, unknown> | undefined, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(obj ?? {})) {
    if (v && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${prefix}${k}.`, out);
    else out[prefix + k] = v;
  }
  return out;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 120 ? s.slice(0, 117) + '…' : s;
}

export function profileFacts(verdict: Verdict | undefined): ProfileFacts {
  const all = { ...flatten(verdict?.compile), ...flatten(verdict?.profile) };
  const facts: ProfileFacts = { other: {} };
  const used = new Set<string>();
  const leaf = (k: string) => k.split('.').pop()!;
  for (const [field, names] of Object.entries(ALIASES)) {
    const key = Object.keys(all).find((k) => names.includes(leaf(k)) || names.includes(k));
    const v = key !== undefined ? num(all[key]) : undefined;
    if (key !== undefined && v !== undefined) {
      (facts as unknown as Record<string, number>)[field] = v;
      used.add(key);
    }
  }
  if (facts.occupancyPct !== undefined && facts.occupancyPct <= 1) facts.occupancyPct *= 100;
  const bottleneck = verdict?.profile?.bottleneck;
  if (typeof bottleneck === 'string') { facts.bottleneck = bottleneck; used.add('bottleneck'); }
  for (const [k, v] of Object.entries(flatten(verdict?.profile))) if (!used.has(k) && v !== undefined && v !== null) facts.other[k] = short(v);
  return facts;
}

export function compileStats(verdict: Verdict | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(flatten(verdict?.compile)).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, short(v)]));
}

/** Whether accepting this candidate makes sense: judged correct and faster than the baseline, and not a leader
 *  that failed when judged again (nondeterministic). */
export function isAcceptable(c: Candidate): boolean {
  return c.verdict?.status === 'ok' && (c.verdict.speedup ?? 0) > 1 && c.operator !== 'baseline' && confirmationOf(c) !== 'lost';
}

/** The first measurement and each confirmation, as the details pane lists them. */
export function confirmationDetails(c: Candidate): CandidateDetails['confirmation'] {
  const state = confirmationOf(c);
  if (!state || !c.verdict) return undefined;
  const m = (v: Verdict) => ({ status: v.status, ...(v.status === 'ok' && v.speedup !== undefined ? { speedup: v.speedup } : {}), ...(v.status !== 'ok' && v.reason ? { reason: v.reason } : {}) });
  return { state, score: scoreOf(c), measurements: [c.verdict, ...(c.confirmations ?? [])].map(m) };
}

export async function candidateDetails(runId: string, c: Candidate, baseline: Candidate | undefined, sourcePath: string): Promise<CandidateDetails> {
  const v = c.verdict;
  return {
    runId,
    id: c.id,
    operator: c.operator,
    mode: c.mode,
    parents: c.parents,
    status: v?.status,
    reason: v?.reason,
    speedup: confirmationOf(c) === 'confirmed' ? scoreOf(c) : v?.speedup,
    ...((confirmationOf(c) === 'confirmed' ? scoreInterval(c) : verdictInterval(v)) ? { interval: confirmationOf(c) === 'confirmed' ? scoreInterval(c) : verdictInterval(v) } : {}),
    confirmation: confirmationDetails(c),
    host: c.placement?.host ?? v?.host,
    rationale: c.rationale,
    knobs: c.knobs,
    shapes: v?.shapes?.map((s) => ({ shape: Object.entries(s.shape).map(([k, x]) => `${k}=${x}`).join(' '), baselineMs: s.baseline_ms, candidateMs: s.candidate_ms, speedup: s.speedup, ...(s.interval ? { interval: s.interval } : {}) })),
    compile: compileStats(v),
    profile: profileFacts(v),
    log: v?.log ? String(v.log).slice(-4000) : undefined,
    diff: baseline ? await highlightedDiff(baseline.source, c.source, path.basename(sourcePath)) : [],
    acceptable: isAcceptable(c),
  };
}
