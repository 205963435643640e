// Scripted timing landscapes for Triton sources: verdicts computed from a candidate's knob values (read back
// from its source by the engine's own detection), with per-shape timings and the failures a GPU gives
// (out of shared memory; wrong results from a block too small for a row). Search tests are exact with them.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { EvaluationJob, Evaluator, PoolVerdict } from '../../../src/contract/job';
import type { Verdict } from '../../../src/contract/verdict';
import { detectKnobs, knobValues, type KnobValues } from '../../../src/engine/knobs';

/** A launch as lecture code writes it: a literal 1024-element block and Triton's default warps (one line a
 *  list entry; it ends with a newline). */
export const LECTURE_GELU = [
    'import torch', 'import triton', 'import triton.language as tl', '',
    'def gelu(x):', '    y = torch.empty_like(x)', '    n = x.numel()', '    block_size = 1024',
    '    gelu_kernel[(triton.cdiv(n, block_size),)](x, y, n, BLOCK_SIZE=block_size)', '    return y', '',
    '@triton.jit', 'def gelu_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):',
    '    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)',
    '    x = tl.load(x_ptr + offs, mask=offs < n)', '    tl.store(y_ptr + offs, x * tl.sigmoid(1.702 * x), mask=offs < n)', '',
].join('\n');

/** A gated row kernel launched two ways (fixtures/triton_tiled_branch.py): a column-tiled launch on Blackwell, with
 *  warps a statement of its own computes, and the row launch elsewhere (Liger's SwiGLU). */
export const TILED_BRANCH = readFileSync(path.join(__dirname, 'fixtures', 'triton_tiled_branch.py'), 'utf8');
/** The same launcher with one statement computing both launches' warps (Liger's softmax and RMSNorm). */
export const TILED_BRANCH_ONE_STATEMENT = TILED_BRANCH.replace('        BLOCK_SIZE, num_warps = tile_settings(n_cols)\n', '')
  .replace('    if use_tiles(n_cols):\n', '    BLOCK_SIZE, num_warps = row_settings(n_cols)\n    if use_tiles(n_cols):\n');

/** One program a row, the row read in literal 1024-element steps on Triton's default warps (a log-softmax over
 *  vocabulary-wide rows has this launch). */
export const ROW_MAX = [
  'import torch', 'import triton', 'import triton.language as tl', '',
  '@triton.jit', 'def row_max_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):', '    row = tl.program_id(0)',
  '    m = -float("inf")', '    for start in range(0, n_cols, BLOCK_SIZE):', '        cols = start + tl.arange(0, BLOCK_SIZE)',
  '        v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))', '        m = tl.maximum(m, tl.max(v, axis=0))',
  '    tl.store(out_ptr + row, m)', '',
  'def row_max(x):', '    out = torch.empty(x.shape[0], device=x.device)', '    BLOCK_SIZE = 1024',
  '    row_max_kernel[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK_SIZE=BLOCK_SIZE)', '    return out', '',
].join('\n');

/** A tiled matmul launched with small tiles, one warp and one stage (as a first version often is). */
export const TRITON_MATMUL = `import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    BLOCK_M = 16
    BLOCK_N = 16
    BLOCK_K = 16
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=1, num_stages=1)
    return c
`;

export const SHARED_LIMIT = 232448;

/** Bytes of shared memory a configuration asks for (fp16 operand tiles, one set per stage). */
export function sharedBytes(v: KnobValues): number {
  return 2 * v.num_stages * v.BLOCK_K * (v.BLOCK_M + v.BLOCK_N);
}

/**
 * Time in arbitrary units, lower is better: smooth in log2 space with the interactions a GPU has (the warps a
 * tile wants grow with its area; deep pipelines pay with long K tiles), optimum at 128x128x64, 8 warps, 4 stages.
 */
export function matmulTime(v: KnobValues): number {
  const m = Math.log2(v.BLOCK_M) - 7;
  const n = Math.log2(v.BLOCK_N) - 7;
  const k = Math.log2(v.BLOCK_K) - 6;
  const wantWarps = Math.max(1, (v.BLOCK_M * v.BLOCK_N) / 2048);
  const w = Math.log2(v.num_warps) - Math.log2(wantWarps);
  const s = v.num_stages - (k >= 0 ? 4 : 3);
  return Math.exp(0.25 * m * m + 0.25 * n * n + 0.3 * k * k + 0.35 * w * w + 0.08 * s * s + 0.05 * m * n);
}

export interface LandscapeShape {
  shape: Record<string, number>;
  /** Time of the candidate's knob values on this shape; `incorrect`/`out of shared memory` when it throws one. */
  time(v: KnobValues): number;
}

export class TritonLandscapeEvaluator implements Evaluator {
  readonly totalSlots = 1;
  readonly jobs: Array<{ id: string; values: KnobValues; status: string }> = [];

  constructor(
    private readonly baseline: string,
    private readonly shapes: LandscapeShape[],
    private readonly fail: (v: KnobValues) => Verdict | undefined = () => undefined,
    readonly hardware?: string,
  ) {}

  async evaluate(job: EvaluationJob): Promise<PoolVerdict> {
    const base = knobValues(detectKnobs(this.baseline, 'python'));
    const values = knobValues(detectKnobs(job.candidateSource, 'python'));
    const failed = this.fail(values);
    this.jobs.push({ id: job.id, values, status: failed?.status ?? 'ok' });
    if (failed) return { ...failed, host: 'landscape' };
    const shapes = this.shapes.map((s) => {
      const baseline_ms = s.time(base);
      const candidate_ms = s.time(values);
      return { shape: s.shape, baseline_ms, candidate_ms, speedup: baseline_ms / candidate_ms };
    });
    const speedup = Math.exp(shapes.reduce((a, s) => a + Math.log(s.speedup), 0) / shapes.length);
    return { status: 'ok', reason: 'Correct.', speedup, shapes, host: 'landscape', placement: { host: 'landscape' } };
  }
}

/** ptxas as on an H200: an fp32 accumulator of BLOCK_M x BLOCK_N values wants more registers a thread than the
 *  launch's threads may have (65536 an SM, at most 255 a thread), as the held-out matmul's 256 x 256 tiles did. */
export function outOfRegisters(v: KnobValues): Verdict | undefined {
  const threads = 32 * v.num_warps;
  if ((v.BLOCK_M * v.BLOCK_N) / threads <= Math.min(255, 65536 / threads)) return undefined;
  return { status: 'compile_error', reason: 'The candidate does not compile: ptxas error   : Entry function uses too many registers: Insufficient registers (64)' };
}

/** What an H200 refuses: too many registers, or too much shared memory. */
export function outOfResources(v: KnobValues): Verdict | undefined {
  return outOfRegisters(v) ?? outOfSharedMemory(v);
}

export function outOfSharedMemory(v: KnobValues): Verdict | undefined {
  const need = sharedBytes(v);
  if (need <= SHARED_LIMIT) return undefined;
  return { status: 'runtime_error', reason: `The candidate raised an error in the correctness stage: out of resource: shared memory, Required: ${need}, Hardware limit: ${SHARED_LIMIT}. Reducing block sizes or \`num_stages\` may help.` };
}

/** The best time ratio over a grid of knob values (what an exhaustive search over that grid finds). */
export function gridBest(axes: Record<string, number[]>, time: (v: KnobValues) => number, base: KnobValues, fail: (v: KnobValues) => unknown): { best: number; points: number } {
  let points: KnobValues[] = [{}];
  for (const [name, values] of Object.entries(axes)) points = points.flatMap((p) => values.map((x) => ({ ...p, [name]: x })));
  let best = 0;
  for (const p of points) if (!fail(p)) best = Math.max(best, time(base) / time(p));
  return { best, points: points.length };
}
