// The side panel's state and the pure operations on it. The extension host keeps the same state (so a
// re-shown or reloaded panel is replayed from it) and both sides apply the same deltas.
import type { BestPoint, CandidateRow, RunDelta, RunView } from './protocol';
import { intervalText } from './contract/verdict';

const LOG_KEEP = 200;

/** Applies a delta in place; returns the ids of rows that were added (the rest were changed). */
export function applyDelta(view: RunView, delta: RunDelta, index: Map<string, number> = rowIndex(view)): string[] {
  if (delta.header) Object.assign(view, delta.header);
  const added: string[] = [];
  for (const row of delta.rows ?? []) {
    const at = index.get(row.id);
    if (at === undefined) {
      index.set(row.id, view.candidates.length);
      view.candidates.push(row);
      added.push(row.id);
    } else {
      view.candidates[at] = { ...view.candidates[at], ...row };
    }
  }
  if (delta.points?.length) view.bestOverTime.push(...delta.points);
  if (delta.log?.length) {
    view.log.push(...delta.log);
    if (view.log.length > LOG_KEEP) view.log.splice(0, view.log.length - LOG_KEEP);
  }
  return added;
}

export function rowIndex(view: RunView): Map<string, number> {
  return new Map(view.candidates.map((c, i) => [c.id, i]));
}

export type SortKey = 'id' | 'speedup' | 'status' | 'host' | 'operator';

/** The table's order: by speedup (best first), or by any column. */
export function sortRows(rows: readonly CandidateRow[], key: SortKey, descending: boolean): CandidateRow[] {
  const val = (r: CandidateRow): string | number => key === 'speedup' ? (r.status === 'ok' ? r.speedup ?? 0 : -1)
    : key === 'status' ? r.status ?? r.state : (r[key] ?? '');
  // By speedup, the confirmed candidates come first: a first measurement alone never sits above the best.
  const tier = (r: CandidateRow) => (key === 'speedup' && r.confirmation === 'confirmed' ? 1 : 0);
  const sorted = [...rows].sort((a, b) => {
    if (tier(a) !== tier(b)) return tier(a) - tier(b);
    const x = val(a);
    const y = val(b);
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c !== 0 ? c : a.id.localeCompare(b.id);
  });
  return descending ? sorted.reverse() : sorted;
}

/** The slice of rows a virtualized table shows for a scroll position. */
export function visibleWindow(total: number, scrollTop: number, viewportHeight: number, rowHeight: number, overscan = 8): { first: number; last: number } {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

export interface LineageNode {
  row: CandidateRow;
  children: LineageNode[];
}

/** The candidates as a forest by first parent; the baseline (no parents) and orphans are roots. */
export function lineage(rows: readonly CandidateRow[]): LineageNode[] {
  const nodes = new Map(rows.map((r) => [r.id, { row: r, children: [] as LineageNode[] }]));
  const roots: LineageNode[] = [];
  for (const r of rows) {
    const parent = r.parents[0] !== undefined ? nodes.get(r.parents[0]) : undefined;
    if (parent && parent.row.id !== r.id) parent.children.push(nodes.get(r.id)!);
    else roots.push(nodes.get(r.id)!);
  }
  return roots;
}

/** The path from a root to the candidate (its ancestry by first parent). */
export function ancestry(rows: readonly CandidateRow[], id: string): string[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const path: string[] = [];
  const seen = new Set<string>();
  for (let cur = byId.get(id); cur && !seen.has(cur.id); cur = byId.get(cur.parents[0] ?? '')) {
    seen.add(cur.id);
    path.unshift(cur.id);
  }
  return path;
}

export interface ChartGeometry {
  /** SVG path of the best-so-far step line. */
  path: string;
  xMaxS: number;
  yMax: number;
  points: { x: number; y: number; id: string; speedup: number }[];
}

/** The best-speedup-over-time step chart, in a width x height box with a margin for labels. */
export function chartGeometry(points: readonly BestPoint[], width: number, height: number, nowMs: number, margin = 28): ChartGeometry {
  const tMax = Math.max(1000, nowMs, ...points.map((p) => p.t));
  const yMax = Math.max(1.5, ...points.map((p) => p.speedup)) * 1.1;
  const sx = (t: number) => margin + (t / tMax) * (width - margin - 6);
  const sy = (s: number) => height - margin + 6 - (s / yMax) * (height - margin);
  const pts = points.map((p) => ({ x: sx(p.t), y: sy(p.speedup), id: p.id, speedup: p.speedup }));
  let d = '';
  pts.forEach((p, i) => {
    d += i === 0 ? `M${p.x.toFixed(1)},${p.y.toFixed(1)}` : `H${p.x.toFixed(1)}V${p.y.toFixed(1)}`;
  });
  if (pts.length) d += `H${sx(tMax).toFixed(1)}`;
  return { path: d, xMaxS: tMax / 1000, yMax, points: pts };
}

export function formatSpeedup(s: number | undefined, interval?: [number, number]): string {
  if (s === undefined || !Number.isFinite(s)) return '—';
  return `${s.toFixed(2)}x${intervalText(s, interval)}`;
}

/** A candidate's one figure wherever it is shown (table, lens, preview, notification): the run's score for it,
 *  `confirmed` once judged again, `unconfirmed` when `unconfirmedNote` and it was measured once only. */
export function formatCandidateSpeedup(r: Pick<CandidateRow, 'status' | 'speedup' | 'confirmation' | 'interval'>, unconfirmedNote = false): string {
  if (r.status !== 'ok') return '—';
  if (r.confirmation === 'lost') return 'lost its place';
  return `${formatSpeedup(r.speedup, r.interval)}${r.confirmation === 'confirmed' ? ' confirmed' : unconfirmedNote ? ' unconfirmed' : ''}`;
}
