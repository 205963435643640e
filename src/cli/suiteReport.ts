// The table a benchmark suite reports, as KernelBench and the KernelEvolve paper do: per problem whether a
// correct kernel was found, its speedup over eager PyTorch and over torch.compile, what the search spent;
// and fast_p, the share of problems solved correctly with a speedup above p.

export interface SuiteRow {
  problem: string;
  /** A candidate other than the problem itself was judged correct. */
  correct: boolean;
  /** The best correct candidate's speedup over the problem's Model in eager mode (geometric mean over shapes). */
  speedupEager?: number;
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
  candidates: number;
  runDir?: string;
}

export const FAST_P = [0, 1.0, 1.5, 2.0] as const;

/** fast_p: correct and faster than p times the baseline, over all problems (KernelBench's metric). */
export function fastP(rows: readonly SuiteRow[], p: number, key: 'speedupEager' | 'speedupCompile'): number | undefined {
  const measured = key === 'speedupEager' ? rows : rows.filter((r) => !r.correct || r.speedupCompile !== undefined);
  if (!measured.length) return undefined;
  return measured.filter((r) => r.correct && (r[key] ?? 0) > p).length / measured.length;
}

const x = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(2)}x`);
const pct = (v: number | undefined) => (v === undefined ? '-' : `${(100 * v).toFixed(0)}%`);

export function suiteTable(rows: readonly SuiteRow[]): string {
  const head = ['problem', 'correct', 'vs eager', 'vs compile', 'tokens', 'eval s', 'note'];
  const body = rows.map((r) => [r.problem, r.correct ? 'yes' : 'no', x(r.speedupEager), x(r.speedupCompile), String(r.tokens),
    r.evalSeconds.toFixed(1), (r.note ?? '').slice(0, 70)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const out = [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), ''];
  for (const key of ['speedupEager', 'speedupCompile'] as const) {
    const label = key === 'speedupEager' ? 'over eager  ' : 'over compile';
    out.push(`fast_p ${label}: ${FAST_P.map((p) => `fast_${p.toFixed(1)} ${pct(fastP(rows, p, key))}`).join('  ')}`);
  }
  const tokens = rows.reduce((s, r) => s + r.tokens, 0);
  const secs = rows.reduce((s, r) => s + r.evalSeconds, 0);
  out.push(`spent: ${tokens} tokens, ${secs.toFixed(1)} s of evaluation on the hosts, ${rows.reduce((s, r) => s + r.candidates, 0)} candidates`);
  return out.join('\n');
}

export function suiteJson(rows: readonly SuiteRow[]): Record<string, unknown> {
  const fast = (key: 'speedupEager' | 'speedupCompile') =>
    Object.fromEntries(FAST_P.map((p) => [`fast_${p.toFixed(1)}`, fastP(rows, p, key) ?? null]));
  return {
    problems: rows,
    fastP: { eager: fast('speedupEager'), compile: fast('speedupCompile') },
    tokens: rows.reduce((s, r) => s + r.tokens, 0),
    evalSeconds: rows.reduce((s, r) => s + r.evalSeconds, 0),
  };
}
