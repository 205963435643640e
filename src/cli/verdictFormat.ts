// A verdict as a person reads it in a terminal.
import { intervalText, type Verdict } from '../contract/verdict';
import { formatSpeedup, verdictInterval } from '../engine/pairedScore';

function ms(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return x >= 1 ? `${x.toFixed(3)} ms` : `${(x * 1000).toFixed(2)} us`;
}

export function formatVerdict(v: Verdict): string {
  const lines: string[] = [];
  const head = v.status === 'ok' && v.speedup !== undefined
    ? `ok  ${formatSpeedup(v.speedup, verdictInterval(v))}  paired ratio: candidate and baseline timed side by side, geometric mean over shapes, 95% interval`
    : v.status;
  lines.push(`${head}${v.host ? `  on ${v.host}` : ''}`);
  lines.push(`  ${v.reason}`);
  if (v.shapes?.length) {
    lines.push('  shape                                  baseline      candidate     speedup (interval)');
    for (const s of v.shapes) {
      const shape = Object.entries(s.shape).map(([k, x]) => `${k}=${String(x)}`).join(' ');
      lines.push(`  ${shape.padEnd(38)} ${ms(s.baseline_ms).padStart(12)}  ${ms(s.candidate_ms).padStart(12)}  ${s.speedup.toFixed(2).padStart(6)}x${intervalText(s.speedup, s.interval)}`);
    }
  }
  if (v.kernelbench) {
    const kb = v.kernelbench;
    lines.push(`  KernelBench's timing: ${kb.speedup.toFixed(2)}x (${ms(kb.baseline_ms)} / ${ms(kb.candidate_ms)}; eager calls, ${kb.method ?? ''}, mean of ${kb.trials}; reported, not judged)`);
  }
  for (const note of v.notes ?? []) lines.push(`  note: ${note}`);
  if (v.compile && Object.keys(v.compile).length) {
    const facts = Object.entries(v.compile).filter(([, x]) => typeof x !== 'object').map(([k, x]) => `${k}=${String(x)}`);
    if (facts.length) lines.push(`  compile: ${facts.join(' ')}`);
  }
  if (v.profile && Object.keys(v.profile).length) {
    const facts = Object.entries(v.profile).filter(([, x]) => typeof x !== 'object').map(([k, x]) => `${k}=${String(x)}`);
    if (facts.length) lines.push(`  profile: ${facts.join(' ')}`);
  }
  if (v.status !== 'ok' && v.log) lines.push('  log (tail):', ...v.log.trim().split('\n').slice(-15).map((l) => `    ${l}`));
  return lines.join('\n');
}
