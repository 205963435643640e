// The prompt adapts to the parent: what a model sees in each mode.
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/engine/candidate';
import { KnowledgeBase } from '../../src/engine/llm/knowledgeBase';
import { buildPrompt, chooseMode, clipLog, failedStrategies, specExcerpt, type PromptInputs } from '../../src/engine/llm/promptBuilder';
import type { KernelSpec } from '../../src/engine/spec';
import type { Verdict } from '../../src/contract/verdict';

const SOURCE = '#include <cstddef>\nextern "C" void scale(const float* x, float* y, size_t n) {\n  for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n}\n';
const SPEC_TEXT = 'BACKEND = "cpp"\nSOURCE = "scale.cpp"\nKERNEL = "scale"\nSHAPES = [{"n": 1000}, {"n": 4097}]\n\ndef inputs(shape, seed):\n    x = np.random.default_rng(seed).standard_normal(shape["n"]).astype(np.float32)\n    return x, np.empty_like(x)\n\ndef launch(k, x, y):\n    k.scale(x, y, x.size)\n    return y\n';
const spec: KernelSpec = { specPath: '/w/scale_spec.py', backend: 'cpp', sourcePath: '/w/scale.cpp', kernel: 'scale' };

let n = 0;
function cand(over: Partial<Candidate> & { verdict?: Verdict }): Candidate {
  const id = over.id ?? `c${String(n++).padStart(4, '0')}`;
  return { id, parents: [], operator: 'llm', source: SOURCE, hash: id, state: 'done', timings: { proposedAt: 0 }, ...over };
}
const okVerdict = (speedup: number, extra: Partial<Verdict> = {}): Verdict => ({
  status: 'ok', reason: 'correct', speedup,
  shapes: [{ shape: { n: 1000 }, baseline_ms: 0.01, candidate_ms: 0.01 / speedup, speedup }, { shape: { n: 4097 }, baseline_ms: 0.04, candidate_ms: 0.04 / speedup, speedup }],
  ...extra,
});

const baseline = cand({ id: 'c0000', operator: 'baseline', verdict: okVerdict(1) });
const broken = cand({
  id: 'c0001', parents: ['c0000'], mode: 'improve', rationale: 'Unroll the loop by 8 with AVX2 intrinsics.',
  source: SOURCE.replace('y[i] = 2.0f * x[i];', '__m256 v = _mm256_loadu_ps(x + i)'),
  verdict: { status: 'compile_error', reason: 'g++ failed', log: "scale.cpp:3:45: error: '__m256' was not declared in this scope\n   3 |   for (...) __m256 v = _mm256_loadu_ps(x + i)\n" },
});
const fast = cand({
  id: 'c0002', parents: ['c0000'], mode: 'improve', rationale: 'Mark the pointers __restrict so GCC vectorizes the loop.',
  verdict: okVerdict(1.8, { compile: { vectorized_loops: 1, n_regs: 0, flags: '-O3 -march=native' }, profile: { bottleneck: 'memory-bound', spread_pct: 1.2 } }),
});
const slower = cand({ id: 'c0003', parents: ['c0002'], mode: 'improve', rationale: 'Use double accumulation.', verdict: okVerdict(1.1) });
const all = [baseline, broken, fast, slower];

function inputs(over: Partial<PromptInputs>): PromptInputs {
  return {
    mode: 'improve', spec, specText: SPEC_TEXT, language: 'clike', baselineSource: SOURCE, candidates: all,
    notes: KnowledgeBase.load().select({ backend: 'cpp', bottleneck: 'memory-bound' }), pastWins: [], ...over,
  };
}
const user = (msgs: { role: string; content: string }[]) => msgs.find((m) => m.role === 'user')!.content;

describe('chooseMode', () => {
  it('follows the parent', () => {
    expect(chooseMode(undefined, undefined)).toBe('draft');
    expect(chooseMode(broken, undefined)).toBe('repair');
    expect(chooseMode(fast, undefined)).toBe('improve');
    expect(chooseMode(baseline, undefined)).toBe('improve');
    expect(chooseMode(fast, slower)).toBe('crossover');
    expect(chooseMode(fast, broken)).toBe('improve');
  });
});

describe('buildPrompt', () => {
  it('repair: carries the compiler error, the failing code and what it tried', () => {
    const msgs = buildPrompt(inputs({ mode: 'repair', parent: broken }));
    const u = user(msgs);
    expect(u).toMatch(/^# Task: repair `scale`/);
    expect(u).toContain('FAILED: compile_error');
    expect(u).toContain("error: '__m256' was not declared in this scope");
    expect(u).toContain('Compiler output:');
    expect(u).toContain('_mm256_loadu_ps(x + i)');
    expect(u).toContain('What it tried: Unroll the loop by 8 with AVX2 intrinsics.');
    expect(msgs[0].content).toMatch(/Do not use threads, OpenMP/);
    expect(msgs[0].content).toContain('```cpp');
  });

  it('improve: carries per-shape timings, compile stats, bottleneck and profile, and the right notes', () => {
    const u = user(buildPrompt(inputs({ mode: 'improve', parent: fast })));
    expect(u).toContain('| n=4097 | 0.0400 | 0.0222 | 1.80x |');
    expect(u).toMatch(/Compile stats: n_regs=0, vectorized_loops=1, flags=-O3 -march=native/);
    expect(u).toContain('Bottleneck class: memory-bound');
    expect(u).toContain('- spread_pct: 1.2');
    expect(u).toContain('### When the kernel is memory-bound');
    expect(u).toContain('### C++ kernels on x86 CPUs');
  });

  it('lists failed and slower strategies so they are not retried, and the best so far', () => {
    const u = user(buildPrompt(inputs({ mode: 'improve', parent: baseline })));
    expect(u).toMatch(/did not work[\s\S]*Use double accumulation. -> correct but slower \(1.10x, its parent 1.80x\)/);
    expect(u).toMatch(/Unroll the loop by 8 with AVX2 intrinsics. -> compile_error: g\+\+ failed/);
    expect(u).toMatch(/Best candidates so far[\s\S]*- c0002 1.80x the baseline \(llm\/improve\): Mark the pointers __restrict/);
  });

  it('carries the spec with its shapes, and the baseline times', () => {
    const u = user(buildPrompt(inputs({ mode: 'draft' })));
    expect(u).toContain('SHAPES = [{"n": 1000}, {"n": 4097}]');
    expect(u).toContain('astype(np.float32)');
    expect(u).toContain('Baseline time per shape: n=1000 0.0100; n=4097 0.0400');
    expect(u).toMatch(/Structures already drafted|structurally different/);
  });

  it('crossover: shows both parents', () => {
    const u = user(buildPrompt(inputs({ mode: 'crossover', parent: fast, other: slower })));
    expect(u).toContain('## Parent c0002: 1.80x the baseline');
    expect(u).toContain('## Parent c0003: 1.10x the baseline');
  });

  it('tells the model why its recent answers were unusable', () => {
    const u = user(buildPrompt(inputs({ mode: 'improve', parent: fast, recentInvalid: ['the answer has no code block and does not define scale'] })));
    expect(u).toContain('Recent answers that could not be used');
  });

  it('shows past wins', () => {
    const u = user(buildPrompt(inputs({ mode: 'improve', parent: fast, pastWins: [{ runId: 'r1', runDir: '/x', kernel: 'scale', backend: 'cpp', speedup: 2.5, rationale: 'Four accumulators.', operator: 'llm', sameKernel: true }] })));
    expect(u).toContain('- 2.50x on scale (cpp, run r1): Four accumulators.');
  });
});

describe('prompt parts', () => {
  it('keeps the head and the tail of a long log', () => {
    const log = 'first error\n' + 'x'.repeat(10_000) + '\nlast line';
    const c = clipLog(log);
    expect(c.length).toBeLessThan(4100);
    expect(c.startsWith('first error')).toBe(true);
    expect(c.endsWith('last line')).toBe(true);
  });

  it('cuts a long spec down to the parts that define the problem', () => {
    const long = SPEC_TEXT + '\n' + Array.from({ length: 200 }, (_, i) => `HELPER_${i} = ${i}  # unrelated`).join('\n');
    const e = specExcerpt(long);
    expect(e).toContain('SHAPES = ');
    expect(e).toContain('def inputs(shape, seed):');
    expect(e).not.toContain('HELPER_');
  });

  it('lists a failed candidate that came without a rationale, with its error', () => {
    const bare = cand({ id: 'c0007', parents: ['c0000'], mode: 'improve', verdict: broken.verdict });
    const lines = failedStrategies({ candidates: [baseline, bare] });
    expect(lines).toEqual([expect.stringMatching(/^c0007 \(llm\/improve, no rationale given\) -> compile_error: g\+\+ failed \(.*'__m256' was not declared/)]);
  });

  it('summarizes no strategy twice', () => {
    const dup = cand({ id: 'c0009', parents: ['c0000'], rationale: broken.rationale, verdict: broken.verdict });
    const lines = failedStrategies({ candidates: [...all, dup] });
    expect(lines.filter((l) => l.includes('AVX2 intrinsics'))).toHaveLength(1);
  });

  it('offers a per-shape dispatch when different candidates win different shapes, and not otherwise', () => {
    const perShape = (a: number, b: number): Verdict => ({ status: 'ok', reason: 'correct', speedup: Math.sqrt(a * b),
      shapes: [{ shape: { n: 1000 }, baseline_ms: 0.01, candidate_ms: 0.01 / a, speedup: a }, { shape: { n: 4097 }, baseline_ms: 0.04, candidate_ms: 0.04 / b, speedup: b }] });
    const wide = cand({ id: 'c0011', parents: ['c0000'], mode: 'improve', rationale: 'Unroll by 16 for long rows.', verdict: perShape(0.7, 2.0) });
    const u = user(buildPrompt(inputs({ mode: 'improve', parent: wide, candidates: [baseline, wide] })));
    expect(u).toContain('## The fastest code differs by shape');
    expect(u).toContain('| n=1000 | c0000 (the baseline) | 1.00x |');
    expect(u).toContain('| n=4097 | c0011: Unroll by 16 for long rows. | 2.00x |');
    expect(u).toContain('Choosing per shape would reach about 1.41x, against 1.18x for the best single candidate. You may answer with a per-shape dispatch');
    expect(u).toContain('in `scale` itself, on its size arguments');
    // a Triton kernel's dispatch goes in its launcher
    const triton = user(buildPrompt(inputs({ mode: 'improve', parent: wide, candidates: [baseline, wide], spec: { ...spec, backend: 'triton', kernel: 'scale_kernel' }, language: 'python' })));
    expect(triton).toMatch(/in the launcher function .*CONFIGS\.get\(\(n_rows, n_cols\), \{\}\)\.get\("num_warps", <the original expression>\)/);
    // one candidate winning everywhere, or a repair, offers none
    expect(user(buildPrompt(inputs({ mode: 'improve', parent: fast })))).not.toContain('differs by shape');
    expect(user(buildPrompt(inputs({ mode: 'repair', parent: broken, candidates: [baseline, wide, broken] })))).not.toContain('differs by shape');
  });
});
