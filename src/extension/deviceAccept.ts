// Accepting a tuned Triton variant when the same kernel has winners on other kinds of hardware: rather than
// overwrite another hardware's winner with this one, the file gets a launcher that picks each hardware's setting
// by the device's compute capability (the accepted variant's on its own hardware, the original computation on
// any other device). Plain data in, a source and a sentence out; the accept command turns it into the edit.
import * as path from 'node:path';
import { deviceDispatch, hardwareWinners, storedWinner, type HardwareWinner } from '../engine/hardwareWinners';
import { formatSpeedup } from '../engine/pairedScore';
import { cudaCapabilityOf } from '../engine/tunedDispatch';

export interface DeviceAcceptInput {
  /** The run the accepted candidate belongs to; the runs stored beside it are searched for other hardware. */
  runDir: string;
  kernel: { sourcePath: string; kernel: string };
  /** The run's baseline (what the table is written into). */
  baseline: string;
  candidateId: string;
}

export type DeviceAccept =
  /** Nothing to keep apart: the variant is accepted as it is. */
  | { kind: 'plain' }
  /** Other hardware has winners, but they cannot share a launcher with this variant: accepted as it is, and why said. */
  | { kind: 'plain'; note: string }
  | { kind: 'by-device'; source: string; message: string };

const capabilityText = (c: [number, number]) => `${c[0]}.${c[1]}`;

function describe(w: HardwareWinner, accepted: boolean): string {
  const cap = cudaCapabilityOf(w.hardware)!;
  return `${w.hardware} (${capabilityText(cap)}): ${w.candidateId}${accepted ? '' : ` of run ${w.runId}`} ${formatSpeedup(w.speedup, w.interval)}`;
}

export function planDeviceAccept(input: DeviceAcceptInput): DeviceAccept {
  if (path.extname(input.kernel.sourcePath) !== '.py') return { kind: 'plain' }; // device tables are written for Triton launchers
  const accepted = storedWinner(input.runDir, input.candidateId);
  if (!accepted) return { kind: 'plain' };
  const others = hardwareWinners(path.dirname(input.runDir), input.kernel).filter((w) => w.hardware !== accepted.hardware);
  if (!others.length) return { kind: 'plain' };
  const kept = `Winners on other hardware (${others.map((w) => `${w.hardware}: ${w.candidateId} of run ${w.runId}`).join('; ')}) are not in it`;
  const capability = cudaCapabilityOf(accepted.hardware);
  if (!capability) return { kind: 'plain', note: `${kept}: the hardware that judged this variant (${accepted.hardware}) has no known CUDA compute capability to choose it by.` };
  if (!accepted.knobs) {
    const why = accepted.mode === 'dispatch' ? 'this variant already chooses per shape, and a device table holds one setting per device' : 'this variant rewrites code, and only tuned launch parameters can be chosen per device';
    return { kind: 'plain', note: `${kept}: ${why}.` };
  }
  const left: string[] = [];
  const tabled = others.filter((w) => {
    const cap = cudaCapabilityOf(w.hardware);
    if (cap && cap[0] === capability[0] && cap[1] === capability[1]) {
      left.push(`${w.hardware}: the same compute capability (${capabilityText(cap)}) as ${accepted.hardware}, whose variant you accepted`);
      return false;
    }
    return true;
  });
  const d = deviceDispatch(input.baseline, path.basename(input.kernel.sourcePath), [accepted, ...tabled]);
  left.push(...d.left);
  const chosen = [accepted, ...tabled.filter((w) => !d.left.some((l) => l.startsWith(`${w.hardware}:`)))];
  if ('error' in d || chosen.length < 2) {
    return { kind: 'plain', note: `${kept}: ${'error' in d ? d.error : left.join('; ')}.` };
  }
  const message = `a launcher choosing per device by compute capability: ${chosen.map((w) => describe(w, w === accepted)).join('; ')}; the original on any other device`
    + (left.length ? ` (left out: ${left.join('; ')})` : '');
  return { kind: 'by-device', source: d.source, message };
}
