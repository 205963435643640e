import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../../src/engine/candidate';
import { createPolicy, GreedyPolicy, IslandPolicy, UcbPolicy, type SelectionView } from '../../../src/engine/selection';
import type { VerdictStatus } from '../../../src/contract/verdict';

function cand(id: string, parents: string[], speedup: number | VerdictStatus, mode?: string, operator = 'llm'): Candidate {
  const verdict = typeof speedup === 'number' ? { status: 'ok' as const, reason: '', speedup } : { status: speedup, reason: '' };
  return { id, parents, operator: id === 'c0000' ? 'baseline' : operator, mode, source: id, hash: id, state: 'done', verdict, timings: { proposedAt: 0 } };
}

function view(candidates: Candidate[], exhausted: string[] = [], expansions: Record<string, number> = {}): SelectionView {
  return { candidates, isExhausted: (_op, id) => exhausted.includes(id), expansions: (id) => expansions[id] ?? 0 };
}

const tree = [
  cand('c0000', [], 1),
  cand('c0001', [], 2.0, 'draft'),
  cand('c0002', [], 'compile_error', 'draft'),
  cand('c0003', ['c0001'], 3.5, 'improve'),
  cand('c0004', [], 1.5, 'draft'),
  cand('c0005', ['c0004'], 1.8, 'improve'),
  { ...cand('c0006', ['c0003'], 9), state: 'evaluating' as const, verdict: undefined },
];

describe('GreedyPolicy', () => {
  it('expands the best judged correct candidate, then the next best once that one is exhausted', () => {
    const p = new GreedyPolicy();
    expect(p.select(view(tree), { operator: 'tune' })!.id).toBe('c0003');
    expect(p.select(view(tree, ['c0003']), { operator: 'tune' })!.id).toBe('c0001');
    expect(p.select(view(tree, ['c0000', 'c0001', 'c0003', 'c0004', 'c0005']), { operator: 'tune' })).toBeUndefined();
  });
});

describe('GreedyPolicy and repairs', () => {
  const judged = (c: Candidate, at: number): Candidate => ({ ...c, timings: { proposedAt: 0, finishedAt: at } });
  const run = [
    judged(cand('c0000', [], 1), 1),
    judged(cand('c0001', [], 2.0, 'draft'), 2),
    judged(cand('c0002', [], 'static_rejected', 'draft'), 3),
    judged(cand('c0003', ['c0001'], 'compile_error', 'improve'), 4),
    judged(cand('c0004', ['c0003'], 'incorrect', 'repair'), 5),
    judged(cand('c0005', ['c0004'], 'runtime_error', 'repair'), 6),
  ];
  const p = new GreedyPolicy();

  it('hands the latest fresh failure to an operator that repairs, never to one that cannot', () => {
    // c0005 is a failed repair of a failed repair: past the depth, so its parent c0004 gets the repair
    expect(p.select(view(run), { operator: 'llm', repairs: true })!.id).toBe('c0004');
    expect(p.select(view(run), { operator: 'tune' })!.id).toBe('c0001');
  });

  it('tries each failure once, skips static rejections, then refines the best again', () => {
    expect(p.select(view(run, [], { c0004: 1 }), { operator: 'llm', repairs: true })!.id).toBe('c0003');
    expect(p.select(view(run, [], { c0004: 1, c0003: 1 }), { operator: 'llm', repairs: true })!.id).toBe('c0001');
  });

  it('leaves failures older than the recent window to the search', () => {
    const older = [...run.slice(0, 4), ...[7, 8, 9, 10, 11, 12, 13, 14, 15].map((t) => judged(cand(`c00${t}`, ['c0001'], 1.5, 'improve'), t))];
    expect(p.select(view(older), { operator: 'llm', repairs: true })!.id).toBe('c0001');
  });

  it('never expands a candidate right only on narrow inputs as a winner, and hands it to a repair', () => {
    const narrow = [...run.slice(0, 2), judged(cand('c0003', ['c0001'], 'narrow_inputs', 'improve'), 4)];
    expect(p.select(view(narrow), { operator: 'tune' })!.id).toBe('c0001');
    expect(p.select(view(narrow), { operator: 'llm', repairs: true })!.id).toBe('c0003');
  });
});

describe('UcbPolicy', () => {
  it('prefers the best while it is fresh, then explores candidates expanded less often', () => {
    const p = new UcbPolicy(0.5);
    expect(p.select(view(tree), { operator: 'llm' })!.id).toBe('c0003');
    const picked = p.select(view(tree, [], { c0003: 30, c0001: 10 }), { operator: 'llm' })!.id;
    expect(['c0005', 'c0004', 'c0000']).toContain(picked);
  });

  it('hands a failed candidate only to an operator that repairs', () => {
    const p = new UcbPolicy(2);
    const failedOnly = [cand('c0000', [], 1), cand('c0001', [], 'incorrect', 'draft')];
    expect(p.select(view(failedOnly, [], { c0000: 50 }), { operator: 'llm', repairs: true })!.id).toBe('c0001');
    expect(p.select(view(failedOnly, [], { c0000: 50 }), { operator: 'tune' })!.id).toBe('c0000');
  });
});

describe('IslandPolicy', () => {
  it('visits each draft island in turn and expands its best', () => {
    const p = new IslandPolicy(4);
    const picks = [0, 1, 2, 3].map(() => p.select(view(tree), { operator: 'llm' })!.id);
    // islands: 0 = the baseline, 1 = c0001 (best descendant c0003), 2 = c0002 (failed: skipped), 3 = c0004 (best c0005)
    expect(picks).toEqual(['c0000', 'c0003', 'c0005', 'c0000']);
  });
});

describe('createPolicy', () => {
  it('knows the policies by name and says which exist', () => {
    expect(createPolicy('ucb').name).toBe('ucb');
    expect(() => createPolicy('random')).toThrow(/use one of greedy, ucb, islands/);
  });
});
