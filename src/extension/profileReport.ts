// A candidate's profile as a markdown report in an editor tab: verdict, timings per shape, compile stats,
// the profile (registers, spills, shared memory, occupancy, roofline position) and the rationale.
import type { Candidate } from '../engine/candidate';
import type { Verdict } from '../contract/verdict';
import { compileStats, profileFacts } from './candidateView';

function table(rows: [string, string][]): string {
  if (!rows.length) return '_none reported_\n';
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`)].join('\n') + '\n';
}

export function profileReportMarkdown(title: string, verdict: Verdict | undefined, candidate?: Pick<Candidate, 'id' | 'operator' | 'mode' | 'rationale' | 'knobs' | 'parents'>): string {
  const lines: string[] = [`# ${title}`, ''];
  if (candidate) lines.push(`Candidate **${candidate.id}** by \`${candidate.operator}${candidate.mode ? '/' + candidate.mode : ''}\`${candidate.parents.length ? ` from ${candidate.parents.join(', ')}` : ''}.`, '');
  if (!verdict) return lines.concat('This candidate has not been judged yet.').join('\n') + '\n';
  lines.push(`**${verdict.status}**${verdict.speedup !== undefined ? ` — ${verdict.speedup.toFixed(3)}x over the baseline` : ''}: ${verdict.reason}`, '');
  if (verdict.host) lines.push(`Judged on \`${verdict.host}\`${verdict.wall_ms !== undefined ? ` in ${(verdict.wall_ms / 1000).toFixed(1)} s` : ''}.`, '');
  if (verdict.shapes?.length) {
    lines.push('## Timings', '', '| shape | baseline ms | candidate ms | speedup |', '|---|---:|---:|---:|');
    for (const s of verdict.shapes) lines.push(`| ${Object.entries(s.shape).map(([k, v]) => `${k}=${v}`).join(' ')} | ${s.baseline_ms.toFixed(4)} | ${s.candidate_ms.toFixed(4)} | ${s.speedup.toFixed(3)}x |`);
    lines.push('');
  }
  const p = profileFacts(verdict);
  lines.push('## Profile', '', table([
    ['registers / thread', p.registers?.toString()], ['spills', p.spills?.toString()],
    ['shared memory', p.sharedMemoryBytes !== undefined ? `${p.sharedMemoryBytes} B` : undefined],
    ['occupancy', p.occupancyPct !== undefined ? `${p.occupancyPct.toFixed(1)} %` : undefined],
    ['bottleneck', p.bottleneck],
    ['roofline', p.intensity !== undefined ? `${p.intensity.toFixed(2)} FLOP/byte${p.achievedGflops !== undefined ? `, ${p.achievedGflops.toFixed(1)} GFLOP/s` : ''}${p.achievedGBps !== undefined ? `, ${p.achievedGBps.toFixed(1)} GB/s` : ''}` : undefined],
    ...Object.entries(p.other),
  ].filter((r): r is [string, string] => r[1] !== undefined)));
  lines.push('## Compile', '', table(Object.entries(compileStats(verdict))));
  if (candidate?.rationale) lines.push('## Rationale', '', candidate.rationale, '');
  if (candidate?.knobs) lines.push('## Knobs', '', table(Object.entries(candidate.knobs).map(([k, v]) => [k, String(v)])));
  if (verdict.log) lines.push('## Log', '', '```', String(verdict.log).slice(-6000), '```', '');
  return lines.join('\n');
}
