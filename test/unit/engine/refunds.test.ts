// The units that candidates cancelled as moot give back (ProposalScheduler.refund): at most REFUND_SHARE of the
// budget over the whole run, a resumed one included.
import { describe, expect, it } from 'vitest';
import type { Candidate, CandidateState } from '../../../src/engine/candidate';
import { CandidateStore } from '../../../src/engine/candidateStore';
import { ProposalScheduler, REFUND_SHARE } from '../../../src/engine/proposalScheduler';
import { GreedyPolicy } from '../../../src/engine/selection';

function storeOf(states: CandidateState[]): CandidateStore {
  const store = new CandidateStore();
  ['done', ...states].forEach((state, i) => {
    const id = `c${String(i).padStart(4, '0')}`;
    store.add({ id, parents: i ? ['c0000'] : [], operator: i ? 'tune' : 'baseline', source: id, hash: id, state } as Candidate);
  });
  return store;
}

const schedulerOf = (store: CandidateStore, budget: number) =>
  new ProposalScheduler({ operators: [], policy: new GreedyPolicy(), store, lang: 'python', depth: 4, draftBudget: 3, budget, maxOperatorFailures: 3 });

const refundsLeft = (s: ProposalScheduler) => {
  let n = 0;
  while (s.refund()) n++;
  return n;
};

describe('refunds of moot candidates', () => {
  it('gives back at most a quarter of the budget', () => {
    const s = schedulerOf(storeOf([]), 20);
    s.used = 20;
    expect(refundsLeft(s)).toBe(Math.round(20 * REFUND_SHARE));
    expect(s.used).toBe(20 - Math.round(20 * REFUND_SHARE));
  });

  it('counts the refunds of a resumed run\'s earlier sessions against the same share', () => {
    // 20 judged and 5 cancelled proposals on 20 units: the 5 cancelled gave theirs back
    const store = storeOf([...Array<CandidateState>(20).fill('done'), ...Array<CandidateState>(5).fill('cancelled')]);
    const s = schedulerOf(store, 24);
    s.resume({ used: 20 });
    expect(refundsLeft(s)).toBe(Math.round(24 * REFUND_SHARE) - 5);
  });
});
