// The best candidate shape by shape, for the end of `kernelevolve evolve`: its paired speedup on each shape of
// the spec, and, when it is a per-shape dispatch, the table its launcher chooses from.
import type { Candidate } from '../engine/candidate';
import { intervalText } from '../contract/verdict';

const shapeText = (s: Record<string, unknown>) => `{${Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', ')}}`;

export function shapeReport(best: Candidate): string {
  const shapes = best.verdict?.shapes ?? [];
  if (!shapes.length) return '';
  const lines = ['per shape:'];
  for (const s of shapes) {
    const interval = intervalText(s.speedup, s.interval);
    lines.push(`  ${shapeText(s.shape).padEnd(40)} ${s.speedup.toFixed(2)}x${interval}`);
  }
  if (best.mode === 'dispatch' && best.knobs) {
    lines.push('the launcher picks per shape (shapes not listed keep the original computation):');
    for (const [shape, choice] of Object.entries(best.knobs)) lines.push(`  ${shape.padEnd(40)} ${choice}`);
  }
  return lines.join('\n');
}
