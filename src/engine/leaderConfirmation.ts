// The winner's curse: the top of many noisy measurements is biased upward, so before a run ends its contenders
// are judged again on the run's hosts; one that is not ok again (it is nondeterministic) loses its place.
// Ranking under noise: one measurement cannot tell apart candidates whose intervals overlap, so every candidate
// whose interval reaches the leader's is a contender, and the leader and the runner-up are judged again while
// their confirmed intervals overlap. The ranking's own figures are biased too (the leader is the top of the
// contenders' confirmations), so once it is settled the leader is judged FIGURE_CONFIRMATIONS more times, side by
// side, and those alone make its reported figure (pairedScore.ts, Candidate.figureFrom). A lone contender (the only
// candidate above the baseline, the common case of a suite's small budgets) has nothing to be ranked against: it
// is judged once more, and that evaluation is its figure. Not counted against the budget; at most 3 x top +
// MAX_FIGURES x FIGURE_CONFIRMATIONS evaluations, and more where evaluations are judged ahead and not used.
// Rounds, not evaluations, are what a user waits for where the hosts have free slots (a GPU host of 20): the
// ranking, the leader's figure and a second leader's figure were three rounds after the first. So where a round
// leaves room, evaluations the rule may ask for next are made beside it and kept aside until it does: the
// ranking's second evaluation of the two best, where their intervals overlap; and FIGURE_CONFIRMATIONS evaluations
// of each candidate that may lead (the leader and those being ranked), a figure ready for whichever the ranking
// settles on. Figures judged ahead never rank anything, so they are as unbiased as the ones judged after the
// pick; an evaluation judged ahead that is not ok counts at once, like any confirmation. One never asked for is
// dropped, and the log says so.
// The search's last round can hold the first of these too (EarlyConfirmations): while the closing proposal (the
// tuner's per-shape table, judged once everything else is) runs on one slot, the free ones judge it again and for
// its figure, and the contenders judged so far again. None of these is picked by its own result, so each is as
// unbiased as one judged after the search; on the H200 the round after the search was 15-39 s of a 55-77 s tune.
import type { Verdict } from '../contract/verdict';
import type { Candidate } from './candidate';
import { isConfirmed, type CandidateStore } from './candidateStore';
import { scoreInterval, scoreOf } from './pairedScore';

/** The most times a contender is judged again while ranking. */
export const RANKING_CONFIRMATIONS = 2;
/** The settled leader's evaluations after the ranking picked it: its reported figure. */
export const FIGURE_CONFIRMATIONS = 3;
/** The most leaders whose figure is measured (a second one: the first's figure fell below the runner-up). */
export const MAX_FIGURES = 2;

export interface ConfirmationContext {
  store: CandidateStore;
  /** Leaders to confirm (0: none). */
  top: number;
  /** A second Stop: no more confirmations. */
  quit?: AbortSignal;
  /** Judges the candidate once more; `n` counts its confirmations (1 for the first), or names an evaluation of a
   *  figure judged ahead (`figure1`...). */
  judge: (c: Candidate, n: number | string, signal: AbortSignal) => Promise<Verdict>;
  /** Evaluations the hosts run at once; figures are judged ahead only where a round leaves room for them. */
  slots?: number;
  onConfirmed: (c: Candidate, confirmation: Verdict) => void;
  log: (level: 'info' | 'warn', message: string) => void;
  /** Evaluations started while the search's last round ran (EarlyConfirmations). */
  early?: EarlyConfirmations;
}

export async function confirmLeaders(ctx: ConfirmationContext): Promise<void> {
  const { store, top } = ctx;
  if (top <= 0 || !store.baseline?.verdict || ctx.quit?.aborted) return;
  // the ranking's evaluations are bounded; a figure is never cut short (the figure the run reports is always the
  // mean of FIGURE_CONFIRMATIONS evaluations), and there is room for a second leader's figure: one whose figure
  // fell below the runner-up's confirmed score. Leaders whose figures keep falling below each other are tied; the
  // best of the figured ones is the run's best (CandidateStore.settleBest).
  const rankingLimit = 3 * top;
  let ranked = 0;
  let figures = 0;
  const ahead = new Map<Candidate, Verdict[]>();
  const rankAhead = new Map<Candidate, Verdict>();
  await ctx.early?.settle(ctx, rankAhead, ahead);
  while (!ctx.quit?.aborted) {
    const lone = figures < MAX_FIGURES ? loneContender(store) : undefined;
    const loneEarly = lone && rankAhead.get(lone);
    if (lone && loneEarly) {
      // judged again during the search, before anything could pick it: that evaluation is its figure
      rankAhead.delete(lone);
      figures += 1;
      lone.figureFrom = lone.confirmations?.length ?? 0;
      ctx.store.confirmed(lone, loneEarly);
      ctx.onConfirmed(lone, loneEarly);
      ctx.log('info', `${lone.id} (${scoreOf(lone).toFixed(2)}x), the only candidate above the baseline: its figure is the evaluation judged again during the search's last round.`);
      continue;
    }
    let batch = lone ? [lone] : ranked < rankingLimit ? nextBatch(store, top).slice(0, rankingLimit - ranked) : [];
    // the ranking's next evaluations of these were judged ahead in an earlier round: no round for them
    const ready = lone ? [] : batch.filter((c) => rankAhead.has(c));
    if (ready.length) {
      ranked += ready.length;
      for (const c of ready) {
        const v = rankAhead.get(c)!;
        rankAhead.delete(c);
        ctx.store.confirmed(c, v);
        ctx.onConfirmed(c, v);
      }
      ctx.log('info', `${ready.map((c) => `${c.id} (${scoreOf(c).toFixed(2)}x)`).join(', ')} judged again for the ranking: the evaluation${ready.length === 1 ? '' : 's'} judged ahead in the round before.`);
      continue;
    }
    let what = `once more to confirm ${batch.length === 1 ? 'its' : 'their'} speedup`;
    let hopefuls: Candidate[] = [];
    let rankers: Candidate[] = [];
    if (lone) {
      // nothing to rank it against, so its next evaluation is not the top of several (unbiased): that one
      // evaluation is its figure. Before, a lone winner was judged once to rank it and three more times for its
      // figure: five judgements of one candidate in a suite of small budgets, each as long as the first.
      figures += 1;
      lone.figureFrom = lone.confirmations?.length ?? 0;
      what = 'once more, for its figure (the only candidate above the baseline: nothing to rank it against)';
    } else if (batch.length) {
      ranked += batch.length;
      const leader = rankingLeader(store);
      // who may lead once this round is in: the leader and the batch (its first figures are what put it here)
      hopefuls = [...new Set([...(leader ? [leader] : []), ...batch])].filter((c) => c.figureFrom === undefined && (isConfirmed(c) || batch.includes(c)));
      // who may be the leader and the runner-up judged once more because their intervals overlap: the two best
      // of them, where their intervals overlap now and this round leaves them short of RANKING_CONFIRMATIONS
      const two = hopefuls.slice().sort(byScore).slice(0, 2);
      if (two.length === 2 && overlap(scoreInterval(two[0]), scoreInterval(two[1]))) {
        rankers = two.filter((c) => (c.confirmations?.length ?? 0) + (batch.includes(c) ? 1 : 0) < RANKING_CONFIRMATIONS && !rankAhead.has(c));
      }
    } else {
      const leader = rankingLeader(store);
      if (!leader || leader.figureFrom !== undefined || figures >= MAX_FIGURES) break;
      figures += 1;
      const ready = ahead.get(leader);
      if (ready) {
        ahead.delete(leader);
        useFigure(ctx, leader, ready);
        continue;
      }
      leader.figureFrom = leader.confirmations!.length;
      batch = Array.from({ length: FIGURE_CONFIRMATIONS }, () => leader);
      what = `${FIGURE_CONFIRMATIONS} more times for its figure (the ranking's own figures are biased upward)`;
      const runnerUp = confirmedByScore(store).find((c) => c !== leader && c.figureFrom === undefined);
      if (runnerUp && overlap(scoreInterval(leader), scoreInterval(runnerUp))) hopefuls = [runnerUp];
    }
    // where the round leaves room on the hosts: the ranking's next evaluation of the two that may need one, then
    // figures (the next leader's, or a second one's), each without a round of its own later
    const free = (ctx.slots ?? 1) - batch.length;
    rankers = rankers.slice(0, Math.max(0, free));
    const room = Math.floor((free - rankers.length) / FIGURE_CONFIRMATIONS);
    hopefuls = hopefuls.filter((c) => !ahead.has(c)).sort(byScore).slice(0, Math.max(0, Math.min(room, MAX_FIGURES - figures)));
    const rankText = rankers.length ? `; ${rankers.map((c) => c.id).join(' and ')} once more beside them, should the ranking ask` : '';
    const aheadText = hopefuls.length ? `; ${hopefuls.map((c) => c.id).join(' and ')} ${FIGURE_CONFIRMATIONS} times beside them, for a figure should ${hopefuls.length === 1 ? 'it' : 'one'} lead` : '';
    ctx.log('info', `Judging ${[...new Set(batch)].map((c) => `${c.id} (${scoreOf(c).toFixed(2)}x)`).join(', ')} ${what}${rankText}${aheadText}.`);
    const next = new Map<Candidate, number>();
    await Promise.all([
      ...batch.map((c) => {
        const n = (next.get(c) ?? c.confirmations?.length ?? 0) + 1;
        next.set(c, n);
        return confirm(ctx, c, n);
      }),
      ...rankers.map((c) => rankingAhead(ctx, c, (c.confirmations?.length ?? 0) + (batch.includes(c) ? 2 : 1), rankAhead)),
      ...hopefuls.map((c) => judgeAhead(ctx, c, ahead)),
    ]);
    // one that lost its place meanwhile needs nothing judged ahead
    for (const c of [...rankAhead.keys()]) if (scoreOf(c) <= 0) rankAhead.delete(c);
  }
  for (const c of rankAhead.keys()) {
    ctx.log('info', `${c.id}'s evaluation judged ahead for the ranking was not needed (its interval no longer overlapped the leader's); dropped.`);
  }
  for (const c of ahead.keys()) {
    ctx.log('info', `${c.id}'s ${FIGURE_CONFIRMATIONS} evaluations judged ahead for a figure were not needed (it did not lead); dropped.`);
  }
}

/** Judges `c` once more for a ranking evaluation it may need (its `n`th confirmation), kept aside until the ranking
 *  asks for it; one that is not ok counts at once (it is nondeterministic, and loses its place). */
async function rankingAhead(ctx: ConfirmationContext, c: Candidate, n: number, rankAhead: Map<Candidate, Verdict>): Promise<void> {
  try {
    await untilQuit(ctx, async (signal) => {
      const v = await ctx.judge(c, n, signal);
      if (v.status !== 'ok') lostPlace(ctx, c, v, 'its earlier figures were not reproducible');
      else rankAhead.set(c, v);
    });
  } catch (e) {
    ctx.log('warn', `${c.id} could not be judged ahead for the ranking (${(e as Error).message.split('\n')[0]}); it is judged in its turn.`);
  }
}

/** Judges `c` FIGURE_CONFIRMATIONS times side by side for a figure it may need, kept aside from its ranking; an
 *  evaluation that is not ok counts at once (it is nondeterministic, and loses its place). */
async function judgeAhead(ctx: ConfirmationContext, c: Candidate, ahead: Map<Candidate, Verdict[]>): Promise<void> {
  await untilQuit(ctx, async (signal) => {
    const settled = await Promise.allSettled(Array.from({ length: FIGURE_CONFIRMATIONS }, (_, i) => ctx.judge(c, `figure${i + 1}`, signal)));
    const verdicts = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = verdicts.find((v) => v.status !== 'ok');
    if (failed) lostPlace(ctx, c, failed, 'its earlier figures were not reproducible');
    else if (verdicts.length === FIGURE_CONFIRMATIONS) ahead.set(c, verdicts);
  });
}

/** Runs `judging` with a signal that a second Stop (ctx.quit) aborts. */
async function untilQuit(ctx: ConfirmationContext, judging: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const onQuit = () => controller.abort();
  ctx.quit?.addEventListener('abort', onQuit, { once: true });
  try {
    await judging(controller.signal);
  } catch (e) {
    if (!controller.signal.aborted) throw e;
  } finally {
    ctx.quit?.removeEventListener('abort', onQuit);
  }
}

/** An evaluation judged again is not ok: it counts at once (the candidate is nondeterministic, and loses its place). */
function lostPlace(ctx: ConfirmationContext, c: Candidate, v: Verdict, why: string): void {
  ctx.store.confirmed(c, v);
  ctx.onConfirmed(c, v);
  ctx.log('warn', `${c.id} lost its place: judged again it is ${v.status} (${v.reason}); ${why}.`);
}

/** The leader's figure from the evaluations judged ahead for it. */
function useFigure(ctx: ConfirmationContext, leader: Candidate, verdicts: Verdict[]): void {
  leader.figureFrom = leader.confirmations!.length;
  for (const v of verdicts) {
    ctx.store.confirmed(leader, v);
    ctx.onConfirmed(leader, v);
  }
  ctx.log('info', `${leader.id} leads; its figure, ${scoreOf(leader).toFixed(2)}x, is the ${FIGURE_CONFIRMATIONS} evaluations judged ahead for it beside the ranking (never used to rank it).`);
}

/**
 * Confirmations started before the search ends, in slots its last round leaves free: that round is the closing
 * proposal alone (Operator.conclude: the tuner's per-shape table, judged once everything else is). The closing
 * candidates in flight are judged again (their ranking's first), the round's first FIGURE_CONFIRMATIONS times for
 * a figure, and the contenders judged so far (nextBatch) again, as slots allow. Nothing here reads a verdict to
 * choose: which are judged depends on the first figures alone, as it would after the search. confirmLeaders takes
 * them as judged ahead (settle); those it never asks for are dropped, and the log says so.
 */
export class EarlyConfirmations {
  /** Evaluations running now (they hold slots the search's queue must leave them). */
  running = 0;
  private readonly rank = new Map<Candidate, Promise<Verdict | undefined>>();
  private readonly figures = new Map<Candidate, Promise<Verdict[] | undefined>>();
  /** The closing candidates seen in flight, and the first of the latest round's: the one judged for a figure. */
  private readonly seen = new Set<Candidate>();
  private ahead?: Candidate;
  private readonly controller = new AbortController();

  constructor(private readonly opts: {
    judge: ConfirmationContext['judge'];
    /** A second Stop: what runs is stopped. */
    quit?: AbortSignal;
    /** An evaluation ended (its slot is free again). */
    onSettled: () => void;
  }) {
    opts.quit?.addEventListener('abort', () => this.controller.abort(), { once: true });
  }

  /** Starts what fits in `free` slots: the closing candidates' ranking evaluations, the contenders', then the
   *  first closing candidate's figure; each once. */
  start(store: CandidateStore, top: number, closing: readonly Candidate[], free: number): void {
    if (top <= 0 || this.controller.signal.aborted) return;
    const contenders = nextBatch(store, top).filter((c) => !c.confirmations?.length);
    for (const c of [...closing, ...contenders]) {
      if (free <= 0) return;
      if (this.rank.has(c)) continue;
      this.rank.set(c, this.one(c, 1));
      free--;
    }
    // a figure ahead for each closing round's first proposal alone (the tuner's table of each shape's fastest
    // launch; the tables of contending launches beside it are ranked, and one that leads gets its figure after):
    // a figure is three evaluations in the queue of one timing lock, and three tables' figures made that round
    // nine evaluations long
    const fresh = closing.filter((c) => !this.seen.has(c));
    if (fresh.length) this.ahead = fresh[0];
    for (const c of fresh) this.seen.add(c);
    const c = this.ahead;
    if (c && closing.includes(c) && !this.figures.has(c) && free >= FIGURE_CONFIRMATIONS) {
      this.figures.set(c, Promise.all(Array.from({ length: FIGURE_CONFIRMATIONS }, (_, i) => this.one(c, `figure${i + 1}`)))
        .then((vs) => (vs.every((v): v is Verdict => !!v) ? vs : undefined)));
    }
  }

  private async one(c: Candidate, n: number | string): Promise<Verdict | undefined> {
    this.running++;
    try {
      return await this.opts.judge(c, n, this.controller.signal);
    } catch {
      return undefined; // judged again in its turn
    } finally {
      this.running--;
      this.opts.onSettled();
    }
  }

  /** Waits for what was started and hands it to the confirmation: a candidate's ranking evaluation as judged
   *  ahead (`rankAhead`), its figure's (`ahead`); one not ok counts at once (it loses its place). A candidate
   *  whose first evaluation was not ok has nothing to confirm: its evaluations are dropped. */
  async settle(ctx: ConfirmationContext, rankAhead: Map<Candidate, Verdict>, ahead: Map<Candidate, Verdict[]>): Promise<void> {
    for (const [c, p] of this.rank) {
      const v = await p;
      if (!v || scoreOf(c) <= 0) continue;
      if (v.status !== 'ok') lostPlace(ctx, c, v, 'its earlier figures were not reproducible');
      else rankAhead.set(c, v);
    }
    for (const [c, p] of this.figures) {
      const vs = await p;
      if (!vs || scoreOf(c) <= 0) continue;
      const failed = vs.find((v) => v.status !== 'ok');
      if (failed) lostPlace(ctx, c, failed, 'its earlier figures were not reproducible');
      else ahead.set(c, vs);
    }
    const n = this.rank.size + FIGURE_CONFIRMATIONS * this.figures.size;
    if (n) ctx.log('info', `${n} evaluation${n === 1 ? '' : 's'} judged again during the search's last round, beside its closing proposal: ${[...this.rank.keys()].map((c) => c.id).join(', ')} once more${this.figures.size ? `; ${[...this.figures.keys()].map((c) => c.id).join(', ')} ${FIGURE_CONFIRMATIONS} times for a figure` : ''}.`);
    this.rank.clear();
    this.figures.clear();
  }

  /** Stops what runs (the run ends without a confirmation). */
  abort(): void {
    this.controller.abort();
  }
}

const overlap = (a: [number, number] | undefined, b: [number, number] | undefined): boolean =>
  !!a && !!b && a[0] <= b[1] && b[0] <= a[1];

const byScore = (a: Candidate, b: Candidate) => scoreOf(b) - scoreOf(a);

/** The confirmed candidates, best first. */
function confirmedByScore(store: CandidateStore): Candidate[] {
  return store.candidates.filter((c) => c !== store.baseline && isConfirmed(c)).sort(byScore);
}

/** The top of the ranking: the best confirmed candidate. */
function rankingLeader(store: CandidateStore): Candidate | undefined {
  return confirmedByScore(store)[0];
}

/** The one candidate above the baseline, judged once and not yet again, when no other is (or was) confirmed: a
 *  ranking of one. */
export function loneContender(store: CandidateStore): Candidate | undefined {
  const base = store.baseline!;
  if (store.candidates.some((c) => c !== base && isConfirmed(c))) return undefined;
  const waiting = store.candidates.filter((c) => c !== base && c.state === 'done' && !c.confirmations?.length && scoreOf(c) > scoreOf(base));
  return waiting.length === 1 ? waiting[0] : undefined;
}

/** Who is judged again next while ranking (none: the ranking is settled, or nothing more would tell). */
export function nextBatch(store: CandidateStore, top: number): Candidate[] {
  const base = store.baseline!;
  const confirmed = confirmedByScore(store);
  const waiting = store.candidates
    .filter((c) => c !== base && c.state === 'done' && !c.confirmations?.length && scoreOf(c) > scoreOf(base))
    .sort(byScore);
  if (confirmed.length < top && waiting.length) {
    // the contenders: the best first figures, and every other one whose interval reaches the first's (at most
    // 2 x top in all)
    const lead = scoreInterval(waiting[0]);
    const reach = waiting.filter((c, i) => i > 0 && lead && (scoreInterval(c)?.[1] ?? 0) >= lead[0]);
    const picks = new Set([...waiting.slice(0, top - confirmed.length), ...reach]);
    return [...picks].slice(0, Math.max(1, 2 * top - confirmed.length));
  }
  const leader = confirmed[0];
  if (!leader) return [];
  // a candidate judged once whose figure still tops the leader's confirmed score
  if (waiting.length && scoreOf(waiting[0]) > scoreOf(leader)) return [waiting[0]];
  // the runner-up, while the two confirmed intervals overlap: both again, so the ranking rests on more than noise
  const again = (c: Candidate) => c.figureFrom === undefined && (c.confirmations?.length ?? 0) < RANKING_CONFIRMATIONS;
  const runnerUp = confirmed[1];
  if (!runnerUp || !overlap(scoreInterval(leader), scoreInterval(runnerUp))) return [];
  return [leader, runnerUp].filter(again);
}

async function confirm(ctx: ConfirmationContext, c: Candidate, n: number): Promise<void> {
  const first = scoreOf(c);
  try {
    await untilQuit(ctx, async (signal) => {
      const confirmation = await ctx.judge(c, n, signal);
      if (confirmation.status !== 'ok') {
        lostPlace(ctx, c, confirmation, `its first ${first.toFixed(2)}x was not reproducible`);
      } else {
        ctx.store.confirmed(c, confirmation);
        ctx.onConfirmed(c, confirmation);
      }
    });
  } catch (e) {
    ctx.log('warn', `${c.id} could not be judged again (${(e as Error).message.split('\n')[0]}); its single measurement stands.`);
  }
}
