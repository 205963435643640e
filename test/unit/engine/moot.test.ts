// Which speculative children a verdict makes moot (speculation.ts, mootReason): a step slower than where it came
// from ends its line; a draft slower than the start does not, since it jumped to a region its children explore.
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../../src/engine/candidate';
import { mootChildren } from '../../../src/engine/speculation';

let n = 0;
function judged(score: number, parent?: Candidate, mode = 'tune'): Candidate {
  const id = `c${String(n++).padStart(4, '0')}`;
  return { id, parents: parent ? [parent.id] : [], operator: parent ? 'tune' : 'baseline', mode: parent ? mode : undefined, source: id, hash: id,
    state: 'done', score, verdict: { status: 'ok', reason: 'Correct.', speedup: score, speedup_interval: [score * 0.99, score * 1.01] },
    timings: { proposedAt: 0 } } as Candidate;
}
function pendingChild(parent: Candidate): Candidate {
  const id = `c${String(n++).padStart(4, '0')}`;
  return { id, parents: [parent.id], operator: 'tune', mode: 'tune', source: id, hash: id, state: 'queued', speculative: true, timings: { proposedAt: 0 } };
}

describe('moot speculative children', () => {
  it('cancels the children of a step slower than its parent', () => {
    const base = judged(1);
    const step = judged(0.9, base);
    const child = pendingChild(step);
    expect(mootChildren(step, [base, step, child]).map((m) => m.reason)).toEqual([
      `its parent ${step.id} (0.900x) turned out slower than ${base.id} (1.000x), which it came from`]);
  });

  it('keeps the children of a draft slower than the start: they are the first look at the region it jumped to', () => {
    const base = judged(1);
    const draft = judged(0.9, base, 'draft');
    const child = pendingChild(draft);
    expect(mootChildren(draft, [base, draft, child])).toEqual([]);
  });

  it('cancels them once the draft is far below the run\'s best, or fails', () => {
    const base = judged(1);
    const best = judged(1.5, base);
    const draft = judged(0.9, base, 'draft');
    const child = pendingChild(draft);
    expect(mootChildren(draft, [base, best, draft, child]).map((m) => m.reason)).toEqual([
      `its parent ${draft.id} (0.900x) is far below the run's best (1.500x) and fastest on no shape`]);
    const failed = { ...judged(0, base, 'draft'), verdict: { status: 'incorrect', reason: 'Wrong results.' } } as Candidate;
    const orphan = pendingChild(failed);
    expect(mootChildren(failed, [base, failed, orphan]).map((m) => m.reason)).toEqual([`its parent ${failed.id} is incorrect`]);
  });
});
