// The winner's curse: the top of many noisy measurements is biased upward, so before a run ends its leaders
// are judged once more on the run's hosts and keep the lower of their figures; one that is not ok the second
// time (it is nondeterministic) loses its place. Not counted against the budget; at most top + 1 evaluations.
import type { Verdict } from '../contract/verdict';
import type { Candidate } from './candidate';
import { isConfirmed, type CandidateStore } from './candidateStore';
import { scoreOf } from './pairedScore';

export interface ConfirmationContext {
  store: CandidateStore;
  /** Leaders to confirm (0: none). */
  top: number;
  /** A second Stop: no more confirmations. */
  quit?: AbortSignal;
  /** Judges the candidate once more; `n` counts its confirmations (1 for the first). */
  judge: (c: Candidate, n: number, signal: AbortSignal) => Promise<Verdict>;
  onConfirmed: (c: Candidate, confirmation: Verdict) => void;
  log: (level: 'info' | 'warn', message: string) => void;
}

export async function confirmLeaders(ctx: ConfirmationContext): Promise<void> {
  const { store, top } = ctx;
  const base = store.baseline;
  if (top <= 0 || !base?.verdict || ctx.quit?.aborted) return;
  const limit = top + 1;
  let judged = 0;
  while (judged < limit && !ctx.quit?.aborted) {
    const confirmed = store.candidates.filter((c) => c !== base && isConfirmed(c));
    const waiting = store.candidates
      .filter((c) => c !== base && c.state === 'done' && !c.confirmations?.length && scoreOf(c) > scoreOf(base))
      .sort((a, b) => scoreOf(b) - scoreOf(a));
    if (!waiting.length) break;
    let batch: Candidate[];
    if (confirmed.length < top) batch = waiting.slice(0, Math.min(top - confirmed.length, limit - judged));
    else if (scoreOf(waiting[0]) > Math.max(...confirmed.map((c) => scoreOf(c)))) batch = [waiting[0]];
    else break;
    ctx.log('info', `Judging ${batch.map((c) => `${c.id} (${scoreOf(c).toFixed(2)}x)`).join(', ')} once more to confirm ${batch.length === 1 ? 'its' : 'their'} speedup.`);
    judged += batch.length;
    await Promise.all(batch.map((c) => confirm(ctx, c)));
  }
}

async function confirm(ctx: ConfirmationContext, c: Candidate): Promise<void> {
  const controller = new AbortController();
  const onQuit = () => controller.abort();
  ctx.quit?.addEventListener('abort', onQuit, { once: true });
  const n = (c.confirmations?.length ?? 0) + 1;
  const first = scoreOf(c);
  try {
    const confirmation = await ctx.judge(c, n, controller.signal);
    ctx.store.confirmed(c, confirmation);
    ctx.onConfirmed(c, confirmation);
    if (confirmation.status !== 'ok') {
      ctx.log('warn', `${c.id} lost its place: judged again it is ${confirmation.status} (${confirmation.reason}); its first ${first.toFixed(2)}x was not reproducible.`);
    }
  } catch (e) {
    if (!controller.signal.aborted) ctx.log('warn', `${c.id} could not be judged again (${(e as Error).message.split('\n')[0]}); its single measurement stands.`);
  } finally {
    ctx.quit?.removeEventListener('abort', onQuit);
  }
}
