// The end of `kernelevolve evolve`: a leaderboard of the correct candidates and the best one's diff.
import * as path from 'node:path';
import type { Candidate } from '../engine/candidate';
import type { TerminationReason } from '../engine/events';
import { isConfirmed } from '../engine/candidateStore';
import { unifiedDiff } from '../engine/sourceDiff';
import { scoreOf } from '../engine/pairedScore';
import type { RunUsage } from '../engine/runStore';

const REASONS: Record<TerminationReason, string> = {
  budget: 'the budget is spent',
  time: 'the time limit was reached',
  plateau: 'no significant improvement for the plateau length',
  target: 'the target speedup was reached',
  stopped: 'stopped by the user',
  exhausted: 'the operators have nothing new to propose',
  error: 'an error',
};

export function reasonText(reason: TerminationReason): string {
  return REASONS[reason];
}

/** Correct candidates, best first; the leaders judged twice (confirmed) rank above single measurements. */
export function ranked(candidates: readonly Candidate[]): Candidate[] {
  return candidates.filter((c) => c.verdict && scoreOf(c) > 0)
    .sort((a, b) => Number(isConfirmed(b)) - Number(isConfirmed(a)) || scoreOf(b) - scoreOf(a));
}

export function leaderboard(candidates: readonly Candidate[], top = 10): string {
  const judged = candidates.filter((c) => c.verdict);
  const ok = ranked(candidates);
  const counts = new Map<string, number>();
  for (const c of judged) counts.set(c.verdict!.status, (counts.get(c.verdict!.status) ?? 0) + 1);
  const lines = [`${judged.length} candidates judged: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ')}`];
  lines.push(' rank  id      operator      speedup             change');
  for (const [i, c] of ok.slice(0, top).entries()) {
    const op = `${c.operator}${c.mode && c.mode !== c.operator ? `/${c.mode}` : ''}`;
    const change = c.operator === 'baseline' ? '(baseline)' : (c.rationale ?? '').split('\n')[0].slice(0, 70);
    const mark = isConfirmed(c) ? 'confirmed' : '';
    lines.push(`${String(i + 1).padStart(5)}  ${c.id}  ${op.padEnd(12)} ${scoreOf(c).toFixed(2).padStart(7)}x  ${mark.padEnd(9)}  ${change}`);
  }
  for (const c of judged.filter((x) => x.confirmations?.some((v) => v.status !== 'ok'))) {
    const v = c.confirmations!.find((x) => x.status !== 'ok')!;
    lines.push(`  ${c.id} lost its place: judged again it was ${v.status} (${v.reason.split('\n')[0].slice(0, 100)})`);
  }
  return lines.join('\n');
}

/** The closing line on the LLM's calls: tokens and, when every call's price was known, the cost. */
export function usageText(u: RunUsage | undefined): string {
  if (!u || !u.calls) return '';
  const cost = u.costUsd !== undefined ? `, $${u.costUsd.toFixed(4)}` : ' (cost unknown: the model is not in the price table)';
  return `LLM usage: ${u.calls} call${u.calls === 1 ? '' : 's'}, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens${cost}`;
}

export function bestDiff(baseline: Candidate, best: Candidate, sourcePath: string): string {
  const name = path.basename(sourcePath);
  return unifiedDiff(baseline.source, best.source, { from: `a/${name} (baseline)`, to: `b/${name} (${best.id})` });
}
