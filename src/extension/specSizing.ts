// Problem sizes for a drafted spec and what one call costs at them: sizes are chosen so that a call stays
// small (the harness calls the baseline and every candidate many times per shape) while the shapes differ
// per dimension (M, K and N never equal, so a kernel that swaps two of them fails) and include odd ones.
import { SizePolynomial } from './sizePolynomial';

export type DraftDevice = 'cpu' | 'gpu';

export interface SizedArray {
  name: string;
  extent: SizePolynomial;
  itemBytes: number;
}

export interface CallEstimate {
  /** Bytes of the kernel's arrays at the largest shape. */
  bytes: number;
  /** Bytes the harness holds for them (pristine copies, guarded copies, reference outputs): about four times. */
  harnessBytes: number;
  /** Estimated seconds per call at the largest shape. */
  seconds: number;
}

/** Above these, the draft warns before any run: a judge would take minutes or crowd the machine's memory. */
export const CALL_LIMITS = { seconds: 0.5, harnessBytes: 2 * 1024 ** 3 };

// CPU: innermost iterations per shape (about 1 ns each) and array bytes; GPU: array bytes.
const TARGETS: Record<DraftDevice, { work: number[]; bytes: number[] }> = {
  cpu: { work: [2e5, 1.5e6, 6e6], bytes: [1 << 20, 8 << 20, 24 << 20] },
  gpu: { work: [Infinity, Infinity, Infinity], bytes: [1 << 20, 16 << 20, 64 << 20] },
};
// Per-dimension factors: the dimensions of one shape differ, so a swapped M and N is caught.
const FACTORS = [1, 1.3, 0.78, 1.15, 0.9, 1.45];

function arrayBytes(arrays: readonly SizedArray[], shape: Record<string, number>): number {
  return arrays.reduce((t, a) => t + Math.max(0, a.extent.evaluate(shape)) * a.itemBytes, 0);
}

/** Three shapes over `dims`: a small odd one, an aligned one (multiples of 16), a larger odd one. */
export function chooseShapes(dims: readonly string[], arrays: readonly SizedArray[], work: SizePolynomial | undefined, device: DraftDevice): Record<string, number>[] {
  if (!dims.length) return [{}];
  const t = TARGETS[device];
  return [0, 1, 2].map((j) => {
    const at = (s: number, parity: (v: number) => number) => Object.fromEntries(dims.map((d, i) => [d, Math.max(1, parity(Math.round(s * FACTORS[i % FACTORS.length])))]));
    const parity = j === 1 ? (v: number) => Math.max(16, Math.round(v / 16) * 16) : (v: number) => v | 1;
    const fits = (s: number) => {
      const shape = at(s, parity);
      return arrayBytes(arrays, shape) <= t.bytes[j] && (work ? work.evaluate(shape) <= t.work[j] : true);
    };
    let lo = 1;
    let hi = 1 << 26;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(mid)) lo = mid;
      else hi = mid;
    }
    return at(lo, parity);
  });
}

/** What one call of the kernel costs at the largest of the shapes. */
export function estimateCall(shapes: readonly Record<string, number>[], arrays: readonly SizedArray[], work: SizePolynomial | undefined, device: DraftDevice): CallEstimate {
  let worst: CallEstimate = { bytes: 0, harnessBytes: 0, seconds: 0 };
  for (const shape of shapes) {
    const bytes = arrayBytes(arrays, shape);
    const iterations = work?.evaluate(shape);
    const seconds = device === 'gpu' ? 5e-6 + bytes / 1.5e12 : (iterations ?? bytes / 4) * 1e-9 + bytes / 5e9;
    if (seconds >= worst.seconds) worst = { bytes, harnessBytes: 4 * bytes, seconds };
  }
  return worst;
}

export function describeBytes(b: number): string {
  return b >= 1024 ** 3 ? `${(b / 1024 ** 3).toFixed(1)} GiB` : b >= 1024 ** 2 ? `${(b / 1024 ** 2).toFixed(1)} MiB` : `${Math.ceil(b / 1024)} KiB`;
}

export function describeSeconds(s: number): string {
  return s >= 1 ? `${s.toFixed(1)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(1)} ms` : `${Math.max(1, Math.round(s * 1e6))} us`;
}

/** One line for the spec's header and the notification, with the warning when a limit is passed. */
export function describeEstimate(e: CallEstimate): { line: string; warning?: string } {
  const line = `one call at the largest shape: about ${describeSeconds(e.seconds)}, ${describeBytes(e.bytes)} of arrays (${describeBytes(e.harnessBytes)} held by the harness)`;
  const over = [e.seconds > CALL_LIMITS.seconds ? `a call takes about ${describeSeconds(e.seconds)}` : '', e.harnessBytes > CALL_LIMITS.harnessBytes ? `the harness would hold about ${describeBytes(e.harnessBytes)}` : ''].filter(Boolean);
  return { line, warning: over.length ? `${over.join(' and ')}: make SHAPES smaller before evolving, or judging will be slow.` : undefined };
}
