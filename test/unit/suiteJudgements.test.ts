// The suite reads each problem's run folder: a leader judged once more (a confirmation row) is a judgement of
// that candidate like its first one, so a confirmed winner is correct, at the lower of its figures.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bestCorrect, judgements } from '../../src/cli/suiteCommand';

function runDir(rows: object[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suite-run-'));
  fs.writeFileSync(path.join(dir, 'verdicts.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return dir;
}

describe('suite judgements', () => {
  it('counts a confirmation as a judgement of its candidate', () => {
    const dir = runDir([
      { id: 'c0000', verdict: { status: 'ok', speedup: 1.0, reason: 'itself' } },
      { id: 'c0001', verdict: { status: 'incorrect', reason: 'zeros' } },
      { id: 'c0002', verdict: { status: 'ok', speedup: 1.21, reason: 'first' } },
      { id: 'c0002', confirmation: { status: 'ok', speedup: 1.19, reason: 'again' } },
    ]);
    const judged = judgements(dir);
    expect(judged.map((j) => j.status)).toEqual(['ok', 'incorrect', 'ok', 'ok']);
    expect(bestCorrect(judged)).toEqual({ id: 'c0002', speedup: 1.19 });
  });

  it('a candidate whose confirmation failed is not the best', () => {
    const dir = runDir([
      { id: 'c0002', verdict: { status: 'ok', speedup: 1.5, reason: 'first' } },
      { id: 'c0002', confirmation: { status: 'incorrect', reason: 'a timed call was wrong' } },
      { id: 'c0003', verdict: { status: 'ok', speedup: 1.1, reason: 'first' } },
    ]);
    expect(bestCorrect(judgements(dir))).toEqual({ id: 'c0003', speedup: 1.1 });
  });
});
