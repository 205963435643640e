import { describe, expect, it } from 'vitest';
import type { CandidateRow, RunView } from '../../src/protocol';
import { ancestry, applyDelta, chartGeometry, lineage, sortRows, visibleWindow } from '../../src/runModel';

const r = (id: string, parents: string[], speedup?: number, status = 'ok'): CandidateRow => ({ id, parents, operator: 'tune', state: 'done', status, speedup, proposedAt: 0 });

describe('runModel', () => {
  it('applies deltas in place and keeps the last 200 log lines', () => {
    const v: RunView = { runId: 'r', runDir: '', kernel: 'k', specPath: '', sourcePath: '', status: 'running', startedAt: 0, evaluated: 0, invalidProposals: 0, candidates: [], bestOverTime: [], log: [] };
    expect(applyDelta(v, { runId: 'r', rows: [r('c0', []), r('c1', ['c0'], 2)] })).toEqual(['c0', 'c1']);
    expect(applyDelta(v, { runId: 'r', rows: [{ ...r('c1', ['c0'], 3) }], header: { evaluated: 2 } })).toEqual([]);
    expect(v.candidates[1].speedup).toBe(3);
    expect(v.evaluated).toBe(2);
    for (let i = 0; i < 250; i++) applyDelta(v, { runId: 'r', log: [{ level: 'info', message: `m${i}`, at: i }] });
    expect(v.log.length).toBe(200);
    expect(v.log[0].message).toBe('m50');
  });

  it('sorts failed candidates below every correct one', () => {
    const rows = [r('a', [], 0.5), r('b', [], undefined, 'compile_error'), r('c', [], 2)];
    expect(sortRows(rows, 'speedup', true).map((x) => x.id)).toEqual(['c', 'a', 'b']);
  });

  it('computes the virtual window with overscan and clamps at the ends', () => {
    expect(visibleWindow(1000, 0, 220, 22, 5)).toEqual({ first: 0, last: 15 });
    expect(visibleWindow(1000, 22 * 500, 220, 22, 5)).toEqual({ first: 495, last: 515 });
    expect(visibleWindow(10, 22 * 500, 220, 22, 5)).toEqual({ first: 495, last: 10 });
  });

  it('builds the lineage forest and ancestry by first parent', () => {
    const rows = [r('c0', []), r('c1', ['c0']), r('c2', ['c1']), r('c3', ['c0'])];
    const roots = lineage(rows);
    expect(roots.map((n) => n.row.id)).toEqual(['c0']);
    expect(roots[0].children.map((n) => n.row.id)).toEqual(['c1', 'c3']);
    expect(ancestry(rows, 'c2')).toEqual(['c0', 'c1', 'c2']);
  });

  it('draws the best-so-far as a rising step line', () => {
    const g = chartGeometry([{ t: 0, speedup: 1.2, id: 'a' }, { t: 5000, speedup: 2.4, id: 'b' }], 300, 120, 10_000);
    expect(g.points[1].y).toBeLessThan(g.points[0].y);
    expect(g.path).toMatch(/^M[\d.]+,[\d.]+H[\d.]+V[\d.]+H[\d.]+$/);
    expect(g.xMaxS).toBe(10);
  });
});
