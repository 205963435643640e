// The end of `kernelevolve evolve` for a per-shape dispatch: the per-shape speedups and the table.
import { describe, expect, it } from 'vitest';
import { shapeReport } from '../../src/cli/shapeReport';
import type { Candidate } from '../../src/engine/candidate';

describe('the CLI\'s report of a dispatch', () => {
  it('lists the per-shape speedups with their intervals and the table the launcher picks from', () => {
    const c = {
      id: 'c0009', parents: ['c0003', 'c0000'], operator: 'tune', mode: 'dispatch', source: '', hash: '', state: 'done', timings: { proposedAt: 0 },
      knobs: { '{rows=4096, cols=1024}': 'num_warps=2 (c0003, 1.49x)', '{rows=2048, cols=8192}': 'as the original computes (c0000, 1.00x)' },
      verdict: { status: 'ok', reason: 'Correct.', speedup: 1.22, shapes: [
        { shape: { rows: 4096, cols: 1024 }, baseline_ms: 0.03, candidate_ms: 0.02, speedup: 1.49, interval: [1.47, 1.51] },
        { shape: { rows: 2048, cols: 8192 }, baseline_ms: 0.1, candidate_ms: 0.1, speedup: 1.0, interval: [0.99, 1.01] }] },
    } as unknown as Candidate;
    expect(shapeReport(c)).toBe([
      'per shape:',
      '  {rows=4096, cols=1024}                   1.49x (1.47-1.51)',
      '  {rows=2048, cols=8192}                   1.00x (0.99-1.01)',
      'the launcher picks per shape (shapes not listed keep the original computation):',
      '  {rows=4096, cols=1024}                   num_warps=2 (c0003, 1.49x)',
      '  {rows=2048, cols=8192}                   as the original computes (c0000, 1.00x)',
    ].join('\n'));
  });
});
