// The suite reads each problem's run folder: its row gives the run's best at the one figure the run reports for
// it (a confirmed leader: the mean of its evaluations after it was picked), not a figure of its own making; a
// leader judged once more (a confirmation row) is a judgement of that candidate like its first one, so one that
// failed when judged again is not correct.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bestCorrect, judgements } from '../../src/cli/suiteCommand';
import { RUN_FORMAT } from '../../src/engine/runStore';
import { tempFolder } from '../support/tempFolders';

/** A run folder as `evolve` leaves it: run.json, candidates/<id>.json and .py, verdicts.jsonl. */
function runDir(rows: Array<{ id: string; verdict?: object; confirmation?: object }>, opts: { best?: string; figureFrom?: Record<string, number> } = {}): string {
  const dir = tempFolder('suite-run-');
  fs.mkdirSync(path.join(dir, 'candidates'));
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ format: RUN_FORMAT, spec: { sourcePath: '/p/problem.py' }, ...(opts.best ? { best: { id: opts.best } } : {}) }));
  for (const id of new Set(rows.map((r) => r.id))) {
    fs.writeFileSync(path.join(dir, 'candidates', `${id}.json`), JSON.stringify({ id, parents: [], operator: 'llm', timings: {}, figureFrom: opts.figureFrom?.[id] }));
    fs.writeFileSync(path.join(dir, 'candidates', `${id}.py`), `# ${id}\n`);
  }
  fs.writeFileSync(path.join(dir, 'verdicts.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return dir;
}

describe('suite judgements', () => {
  it('gives the run\'s best at the run\'s figure for it: the mean of its evaluations after it was picked', () => {
    const dir = runDir([
      { id: 'c0000', verdict: { status: 'ok', speedup: 1.0, reason: 'itself' } },
      { id: 'c0001', verdict: { status: 'incorrect', reason: 'zeros' } },
      { id: 'c0002', verdict: { status: 'ok', speedup: 1.31, reason: 'first' } },
      { id: 'c0002', confirmation: { status: 'ok', speedup: 1.25, reason: 'ranking' } },
      ...[1.19, 1.21, 1.2].map((speedup) => ({ id: 'c0002', confirmation: { status: 'ok', speedup, reason: 'figure' } })),
      { id: 'c0003', verdict: { status: 'ok', speedup: 1.22, reason: 'first' } },
    ], { best: 'c0002', figureFrom: { c0002: 1 } });
    expect(judgements(dir).map((j) => j.status)).toEqual(['ok', 'incorrect', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    const best = bestCorrect(dir)!;
    expect(best.id).toBe('c0002');
    expect(best.speedup).toBeCloseTo(Math.cbrt(1.19 * 1.21 * 1.2), 10);
  });

  it('a candidate whose confirmation failed is not the best', () => {
    const dir = runDir([
      { id: 'c0000', verdict: { status: 'ok', speedup: 1.0, reason: 'itself' } },
      { id: 'c0002', verdict: { status: 'ok', speedup: 1.5, reason: 'first' } },
      { id: 'c0002', confirmation: { status: 'incorrect', reason: 'a timed call was wrong' } },
      { id: 'c0003', verdict: { status: 'ok', speedup: 1.1, reason: 'first' } },
    ], { best: 'c0003' });
    expect(bestCorrect(dir)).toEqual({ id: 'c0003', speedup: 1.1 });
  });

  it('when nothing beat the problem itself, the fastest correct candidate is still its answer (correct, below 1x)', () => {
    const dir = runDir([
      { id: 'c0000', verdict: { status: 'ok', speedup: 1.0, reason: 'itself' } },
      { id: 'c0001', verdict: { status: 'ok', speedup: 0.61, reason: 'slow' } },
      { id: 'c0002', verdict: { status: 'ok', speedup: 0.83, reason: 'slower' } },
      { id: 'c0003', verdict: { status: 'timeout', reason: 'hung' } },
    ], { best: 'c0000' });
    expect(bestCorrect(dir)).toEqual({ id: 'c0002', speedup: 0.83 });
    expect(bestCorrect(path.join(dir, 'nothing-here'))).toBeUndefined();
  });
});
