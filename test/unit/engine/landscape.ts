// A deterministic stand-in for timing: speedups computed from a kernel's knob values, so search tests are exact.
import type { EvaluationJob, Evaluator, PoolJobOptions, PoolVerdict } from '../../../src/contract/job';
import { detectKnobs, knobValues, type KnobValues } from '../../../src/engine/knobs';

export const MATMUL = `#include <algorithm>
constexpr int BLOCK_M = 64;
constexpr int BLOCK_N = 16;
constexpr int BLOCK_K = 16;
constexpr int N_FIXED = 1024;  // changing this breaks the kernel

extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int j0 = 0; j0 < N; j0 += BLOCK_N) C[j0] = A[0] * B[0] * N_FIXED;
}
`;

/** Smooth in log2 space with an interaction term, optimum at BLOCK_M=32, BLOCK_N=256, BLOCK_K=128. */
export function matmulLandscape(v: KnobValues): number {
  if (v.N_FIXED !== undefined && v.N_FIXED !== 1024) return 0;
  const m = Math.log2(v.BLOCK_M) - 5;
  const n = Math.log2(v.BLOCK_N) - 8;
  const k = Math.log2(v.BLOCK_K) - 7;
  if (v.BLOCK_M * v.BLOCK_K > 65536) return 0; // "does not fit": a runtime error
  return 12 * Math.exp(-(m * m) / 6 - (n * n) / 3 - (k * k) / 5 - 0.15 * m * n);
}

export class LandscapeEvaluator implements Evaluator {
  readonly totalSlots: number;
  readonly jobs: string[] = [];
  maxConcurrent = 0;
  private running = 0;

  constructor(private readonly f: (v: KnobValues) => number, private readonly baseline: string, slots = 1, private readonly delayMs = 0) {
    this.totalSlots = slots;
  }

  async evaluate(job: EvaluationJob, opts: PoolJobOptions = {}): Promise<PoolVerdict> {
    this.jobs.push(job.id);
    this.running++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.running);
    try {
      opts.onStart?.('landscape');
      if (this.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, this.delayMs);
          opts.signal?.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          }, { once: true });
        });
      }
      const base = this.f(knobValues(detectKnobs(this.baseline, 'clike')));
      const s = this.f(knobValues(detectKnobs(job.candidateSource, 'clike')));
      if (s <= 0) return { status: 'runtime_error', reason: 'The candidate crashed.', host: 'landscape' };
      return { status: 'ok', reason: 'Correct.', speedup: s / base, host: 'landscape', placement: { host: 'landscape' } };
    } finally {
      this.running--;
    }
  }
}

/** The best speedup over the whole power-of-two grid of the three block sizes (what exhaustive search finds). */
export function gridBest(f: (v: KnobValues) => number, baseline: string): number {
  const base = f(knobValues(detectKnobs(baseline, 'clike')));
  let best = 0;
  for (let a = 1; a <= 1024; a *= 2) for (let b = 1; b <= 1024; b *= 2) for (let c = 1; c <= 1024; c *= 2) {
    best = Math.max(best, f({ BLOCK_M: a, BLOCK_N: b, BLOCK_K: c, N_FIXED: 1024 }) / base);
  }
  return best;
}
