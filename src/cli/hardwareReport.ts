// The end of `kernelevolve evolve`: this kernel's winners by hardware across the runs stored beside this one
// and, when two or more kinds of GPU have a tuned winner, a launcher choosing per device written into the run
// folder (the original computation on any other device), so one hardware's winner does not replace another's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deviceDispatch, hardwareWinners } from '../engine/hardwareWinners';
import { formatSpeedup } from '../engine/pairedScore';
import type { KernelSpec } from '../engine/spec';

export function hardwareReport(runDir: string, spec: KernelSpec, baselineSource: string): string {
  const winners = hardwareWinners(path.dirname(runDir), spec);
  if (winners.length < 2) return '';
  const lines = [`winners by hardware for ${spec.kernel}:`];
  for (const w of winners) lines.push(`  ${w.hardware.padEnd(20)} ${formatSpeedup(w.speedup, w.interval)}${w.confirmed ? ' confirmed' : ''}  ${w.candidateId} of run ${w.runId}${w.mode ? ` (${w.operator}/${w.mode})` : ''}`);
  if (spec.backend !== 'triton') return lines.join('\n');
  const d = deviceDispatch(baselineSource, spec.sourcePath, winners);
  if ('error' in d) {
    lines.push(`no launcher by device: ${d.error}${d.left.length ? ` (${d.left.join('; ')})` : ''}`);
  } else {
    const file = path.join(runDir, `by-device${path.extname(spec.sourcePath)}`);
    fs.writeFileSync(file, d.source);
    lines.push(`a launcher choosing per device (compute capability; the original elsewhere): ${file}${d.left.length ? `; left out: ${d.left.join('; ')}` : ''}`);
  }
  return lines.join('\n');
}
