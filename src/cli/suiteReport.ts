// The table a benchmark suite reports, as KernelBench and the KernelEvolve paper do: per problem whether a
// correct kernel was found, its speedup over eager PyTorch (the harness's paired ratio, and KernelBench's own eager
// timing beside it) and over torch.compile, what the search spent and how long the problem took; and fast_p, the
// share of problems solved correctly with a speedup above p. With --self-judge, the harness's own check: each
// problem's Model judged against itself, which should read ok at 1.00.

export interface SuiteRow {
  problem: string;
  /** A candidate other than the problem itself was judged correct. */
  correct: boolean;
  /** The best correct candidate's speedup over the problem's Model in eager mode (geometric mean over shapes). */
  speedupEager?: number;
  /** The same candidate's speedup as KernelBench times it (eager calls, the ratio of the means; the geometric mean
   *  over the evaluations its figure comes from). */
  kernelbench?: number;
  /** The same candidate against the Model under torch.compile (GPU problems, where measured). */
  speedupCompile?: number;
  /** Why no correct candidate: the last failure's status and reason. */
  note?: string;
  bestId?: string;
  /** The best candidate's file, written next to the run. */
  kernelFile?: string;
  tokens: number;
  /** Seconds the hosts spent judging this problem's candidates (device-seconds on a GPU host). */
  evalSeconds: number;
  /** Wall seconds the suite spent on the problem (search, confirmations, the torch.compile judgement). */
  wallSeconds?: number;
  candidates: number;
  runDir?: string;
}

type SpeedupKey = 'speedupEager' | 'speedupCompile';

export const FAST_P = [0, 1.0, 1.5, 2.0] as const;

/** fast_p: correct and faster than p times the baseline, over all problems (KernelBench's metric). */
export function fastP(rows: readonly SuiteRow[], p: number, key: SpeedupKey): number | undefined {
  const measured = key === 'speedupEager' ? rows : rows.filter((r) => !r.correct || r[key] !== undefined);
  if (!measured.length) return undefined;
  return measured.filter((r) => r.correct && (r[key] ?? 0) > p).length / measured.length;
}

const x = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(2)}x`);
const pct = (v: number | undefined) => (v === undefined ? '-' : `${(100 * v).toFixed(0)}%`);

const secs = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));

function columns(head: string[], body: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

// fast_p comes from the harness's checked, paired timing alone: KernelBench's eager timing (one input set every
// trial, as KernelBench times it) is a column of what KernelBench would report, never a headline
const FAST_LINES: Array<[SpeedupKey, string]> = [
  ['speedupEager', 'over eager  '],
  ['speedupCompile', 'over compile'],
];

export function suiteTable(rows: readonly SuiteRow[]): string {
  const head = ['problem', 'correct', 'vs eager', 'KB eager', 'vs compile', 'tokens', 'eval s', 'wall s', 'note'];
  const body = rows.map((r) => [r.problem, r.correct ? 'yes' : 'no', x(r.speedupEager), x(r.kernelbench), x(r.speedupCompile), String(r.tokens),
    r.evalSeconds.toFixed(1), secs(r.wallSeconds), (r.note ?? '').slice(0, 70)]);
  const out = [...columns(head, body), ''];
  for (const [key, label] of FAST_LINES) {
    out.push(`fast_p ${label}: ${FAST_P.map((p) => `fast_${p.toFixed(1)} ${pct(fastP(rows, p, key))}`).join('  ')}`);
  }
  const tokens = rows.reduce((s, r) => s + r.tokens, 0);
  const evalS = rows.reduce((s, r) => s + r.evalSeconds, 0);
  const wallS = rows.reduce((s, r) => s + (r.wallSeconds ?? 0), 0);
  out.push(`spent: ${tokens} tokens, ${evalS.toFixed(1)} s of evaluation on the hosts, ${rows.reduce((s, r) => s + r.candidates, 0)} candidates, ${wallS.toFixed(1)} s of wall time`);
  return out.join('\n');
}

export function suiteJson(rows: readonly SuiteRow[]): Record<string, unknown> {
  const fast = (key: SpeedupKey) =>
    Object.fromEntries(FAST_P.map((p) => [`fast_${p.toFixed(1)}`, fastP(rows, p, key) ?? null]));
  return {
    problems: rows,
    fastP: { eager: fast('speedupEager'), compile: fast('speedupCompile') },
    tokens: rows.reduce((s, r) => s + r.tokens, 0),
    evalSeconds: rows.reduce((s, r) => s + r.evalSeconds, 0),
    wallSeconds: rows.reduce((s, r) => s + (r.wallSeconds ?? 0), 0),
  };
}

// ------------------------------------------------------------------ --self-judge

/** A problem's Model judged as the candidate against itself. */
export interface SelfJudgement {
  problem: string;
  status: string;
  /** The geometric mean of the paired ratios over shapes (1.00 when the harness is right). */
  speedup?: number;
  interval?: [number, number];
  /** KernelBench's eager timing of the same two calls. */
  kernelbench?: number;
  reason: string;
  evalSeconds: number;
  wallSeconds: number;
  /** Judged again alone, once the others were done: what it read beside them, where that was outside 1.00 +-
   *  SELF_TOLERANCE (other problems' work on the device during its timing). */
  besideOthers?: number;
}

/** How far from 1.00 a problem judged against itself may read and still count as right. */
export const SELF_TOLERANCE = 0.03;

export const withinSelfTolerance = (j: SelfJudgement): boolean =>
  j.status === 'ok' && j.speedup !== undefined && Math.abs(j.speedup - 1) <= SELF_TOLERANCE;

export interface SelfJudgeSummary {
  byStatus: Record<string, number>;
  ok: number;
  /** ok and within 1.00 +- SELF_TOLERANCE */
  within: number;
  /** read outside 1.00 +- SELF_TOLERANCE beside other problems, and judged again alone */
  rejudgedAlone: number;
  wallSeconds: number;
  evalSeconds: number;
  slowest: Array<{ problem: string; wallSeconds: number }>;
}

export function selfJudgeSummary(rows: readonly SelfJudgement[]): SelfJudgeSummary {
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  return {
    byStatus,
    ok: byStatus.ok ?? 0,
    within: rows.filter(withinSelfTolerance).length,
    rejudgedAlone: rows.filter((r) => r.besideOthers !== undefined).length,
    wallSeconds: rows.reduce((s, r) => s + r.wallSeconds, 0),
    evalSeconds: rows.reduce((s, r) => s + r.evalSeconds, 0),
    slowest: [...rows].sort((a, b) => b.wallSeconds - a.wallSeconds).slice(0, 10).map((r) => ({ problem: r.problem, wallSeconds: r.wallSeconds })),
  };
}

/** This session of the suite: its wall time, and how many problems it judged at once. */
export interface SuiteSession {
  elapsedSeconds: number;
  jobs: number;
  /** The wall time of every session of this suite so far, this one last (a suite interrupted and resumed). */
  sessionsSeconds?: number[];
}

/** What the time line adds about the suite's sessions: how many problems ran at once and how long this session
 *  took, and where the suite was resumed, how long all its sessions took together. */
function sessionNote(session: SuiteSession | undefined): string {
  if (!session) return '';
  const all = session.sessionsSeconds ?? [];
  const resumed = all.length > 1 ? `its ${all.length} sessions took ${all.reduce((a, b) => a + b, 0).toFixed(1)} s in all` : '';
  if (session.jobs > 1) {
    return ` (the problems' own; ${session.jobs} at a time, this session took ${session.elapsedSeconds.toFixed(1)} s${resumed ? `; ${resumed}` : ''})`;
  }
  return resumed ? ` (${resumed})` : '';
}

export function selfJudgeTable(rows: readonly SelfJudgement[], session?: SuiteSession): string {
  const head = ['problem', 'status', 'itself', 'interval', 'KB eager', 'eval s', 'wall s', 'note'];
  const body = rows.map((r) => [r.problem, r.status, x(r.speedup), r.interval ? `${r.interval[0].toFixed(3)}-${r.interval[1].toFixed(3)}` : '-',
    x(r.kernelbench), r.evalSeconds.toFixed(1), r.wallSeconds.toFixed(1),
    ([r.besideOthers !== undefined ? `alone; ${x(r.besideOthers)} beside others` : '',
      r.status === 'ok' ? (withinSelfTolerance(r) ? '' : `outside 1.00 +- ${SELF_TOLERANCE.toFixed(2)}`) : r.reason]
      .filter(Boolean).join('; ')).slice(0, 70)]);
  const s = selfJudgeSummary(rows);
  return [
    ...columns(head, body),
    '',
    `self-judged: ${rows.length} problems; ${Object.entries(s.byStatus).map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `within 1.00 +- ${SELF_TOLERANCE.toFixed(2)}: ${s.within} of ${rows.length}`
      + (s.rejudgedAlone ? ` (${s.rejudgedAlone} of them judged again alone after reading outside it beside other problems: the "beside others" note)` : ''),
    `time: ${s.wallSeconds.toFixed(1)} s of wall time, ${s.evalSeconds.toFixed(1)} s of evaluation on the hosts`
      + sessionNote(session),
    `slowest: ${s.slowest.map((r) => `${r.problem} ${r.wallSeconds.toFixed(1)} s`).join(', ')}`,
  ].join('\n');
}

export function selfJudgeJson(rows: readonly SelfJudgement[], session?: SuiteSession): Record<string, unknown> {
  return { selfJudge: true, problems: rows, ...selfJudgeSummary(rows), ...(session ? { session } : {}) };
}
