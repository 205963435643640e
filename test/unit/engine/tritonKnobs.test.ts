// Knobs in Triton code as people write it: launch parameters computed by helpers and expressions, autotune
// lists built by comprehensions and loops, heuristics. Every rewritten source is parsed by Python itself.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyKnobs, detectKnobs, type Knob, searchableKnobs, tiedAsIn } from '../../../src/engine/knobs';
import { PLAIN_PYTHON } from './pythonLaunches';
import { LECTURE_GELU, TILED_BRANCH, TILED_BRANCH_ONE_STATEMENT } from './tritonLandscape';

const fixture = (name: string) => readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

/** Python's own parser on the text: undefined when it compiles, else the error. */
function pythonSyntaxError(src: string): string | undefined {
  try {
    execFileSync(PLAIN_PYTHON, ['-c', 'import sys, ast; ast.parse(sys.stdin.read())'], { input: src, stdio: ['pipe', 'pipe', 'pipe'] });
    return undefined;
  } catch (e) {
    return String((e as { stderr?: Buffer }).stderr ?? e);
  }
}

const find = (knobs: Knob[], name: string) => {
  const k = knobs.find((x) => x.name === name);
  if (!k) throw new Error(`no knob ${name} in ${knobs.map((x) => x.name).join(', ')}`);
  return k;
};

describe('launch parameters computed by the launcher', () => {
  const src = fixture('triton_computed_launch.py');
  const set = detectKnobs(src, 'k.py');

  it('finds BLOCK_SIZE and num_warps from a helper returning a tuple, with the statement that computes them', () => {
    const block = find(set.knobs, 'BLOCK_SIZE');
    const warps = find(set.knobs, 'num_warps');
    expect(block).toMatchObject({ kind: 'triton-computed', role: 'block', value: 0, expression: 'BLOCK_SIZE', scope: 'scale_rows' });
    expect(block.origin).toBe('BLOCK_SIZE, num_warps = launch_settings(n_cols)');
    expect(warps).toMatchObject({ kind: 'triton-computed', role: 'warps', value: 0, domain: [1, 2, 4, 8, 16, 32] });
    // `fn = a if gemma else b; fn[(n_rows,)](...)`: both kernels are what the site launches
    expect(block.kernels!.sort()).toEqual(['_scale_rows_gemma_kernel', '_scale_rows_kernel']);
  });

  it('a block that covers the row in one pass is guarded (never below the computed size) and left out of the search', () => {
    const block = find(set.knobs, 'BLOCK_SIZE');
    expect(block.guard).toBe('covers');
    expect(block.searched).toBe(false);
    const out = applyKnobs(src, set, { BLOCK_SIZE: 8192, num_warps: 8 });
    expect(out).toContain('        BLOCK_SIZE=max(8192, BLOCK_SIZE),  # one block covers the row\n        num_warps=8,\n');
    // the launcher's own uses of the names are unchanged
    expect(out).toContain('    BLOCK_SIZE, num_warps = launch_settings(n_cols)\n');
    expect(pythonSyntaxError(out)).toBeUndefined();
    // read back, the guarded value is the knob's value and the guard stays
    const again = find(detectKnobs(out, 'k.py').knobs, 'BLOCK_SIZE');
    expect(again).toMatchObject({ value: 8192, guard: 'covers', expression: 'BLOCK_SIZE' });
    expect(find(detectKnobs(out, 'k.py').knobs, 'num_warps')).toMatchObject({ kind: 'triton-launch', value: 8 });
  });

  it('a block size that tiles the data is a free knob, and the grid that uses the same variable follows it', () => {
    const block = find(set.knobs, 'BLOCK');
    expect(block).toMatchObject({ kind: 'triton-computed', role: 'block', value: 0, origin: 'BLOCK = min(4096, triton.next_power_of_2(n))' });
    expect(block.searched).not.toBe(false);
    expect(block.spans.length).toBe(2);
    // a vector's length (no tl.dot in the kernel) ranges to 8192, a matmul tile stops at 256
    expect(Math.max(...block.domain)).toBe(8192);
    expect(Math.max(...find(detectKnobs(fixture('triton_autotune_built.py'), 'k.py').knobs, 'cfg0.BLOCK_N').domain)).toBe(512);
    const warps = find(set.knobs, 'num_warps@93');
    expect(warps.origin).toBe('num_warps = min(max(BLOCK // 256, 1), 8)');
    const out = applyKnobs(src, set, { BLOCK: 1024, 'num_warps@93': 2 });
    expect(out).toContain('    grid = (triton.cdiv(n, 1024),)\n');
    expect(out).toContain('_gelu_kernel[grid](x, y, n, BLOCK=1024, num_warps=2)');
    expect(out).toContain('    BLOCK = min(4096, triton.next_power_of_2(n))\n');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('a call written at the launch is a knob too; a looping kernel launched without num_stages gets it as a knob', () => {
    const block = find(set.knobs, 'BLOCK@110');
    expect(block).toMatchObject({ kind: 'triton-computed', expression: 'min(1024, triton.next_power_of_2(n_cols))' });
    expect(block.searched).not.toBe(false); // the kernel loops over the row in steps of BLOCK
    const stages = find(set.knobs, 'num_stages');
    expect(stages).toMatchObject({ kind: 'triton-launch-option', role: 'stages', insert: 'num_stages', kernels: ['_row_sum_kernel'] });
    const out = applyKnobs(src, set, { 'BLOCK@110': 256, num_stages: 3 });
    expect(out).toContain('_row_sum_kernel[(n_rows,)](x, out, n_cols, BLOCK=256, num_warps=4, num_stages=3)');
    expect(pythonSyntaxError(out)).toBeUndefined();
    // the kernels without loops get no stages knob
    expect(set.knobs.filter((k) => k.insert === 'num_stages').length).toBe(1);
  });

  it('a local literal passed through a kwargs dict and the grid is a block knob by its use (an arange of it)', () => {
    const rows = find(set.knobs, 'ROWS');
    expect(rows).toMatchObject({ kind: 'py-constant', role: 'block', value: 16, kernels: ['_scale_row_blocks_kernel'] });
    const out = applyKnobs(src, set, { ROWS: 64 });
    expect(out).toContain('    ROWS = 64\n    extra["ROWS"] = ROWS\n');
    expect(out).toContain('[(triton.cdiv(n_rows, ROWS),)]');
  });

  it('one name computed by two statements, one per branch (a Blackwell tile\'s settings, the row\'s): a knob each', () => {
    // Liger's SwiGLU launches a column-tiled kernel on Blackwell and its row kernel elsewhere, both with
    // `num_warps=num_warps`; before, one knob moved both launches, and the search on a Hopper wrote the tiled launch too
    const tiled = TILED_BRANCH;
    const both = detectKnobs(tiled, 'k.py');
    const warps = both.knobs.filter((k) => k.role === 'warps');
    expect(warps.map((k) => [k.name, k.kernels, k.origin, k.spans.length])).toEqual([
      ['num_warps', ['_gated_kernel_tiled'], 'BLOCK_SIZE, num_warps = tile_settings(n_cols)', 1],
      ['num_warps@61', ['_gated_kernel'], 'BLOCK_SIZE, num_warps = row_settings(n_cols)', 1],
    ]);
    expect(searchableKnobs(both, '_gated_kernel').knobs.map((k) => k.name)).toEqual(['num_warps@61']);
    const out = applyKnobs(tiled, both, { 'num_warps@61': 8 });
    expect(out).toContain('(a, b, c, a.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)');
    expect(out).toContain('a, b, c, a.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps\n');
    expect(pythonSyntaxError(out)).toBeUndefined();
    // a tuned file names the row launch's warps as the original did
    expect(searchableKnobs(detectKnobs(out, 'k.py'), '_gated_kernel').knobs.map((k) => [k.name, k.value])).toEqual([['num_warps@61', 8]]);
    // one statement before two launches (Liger's RMSNorm: a row kernel, or a block-of-rows kernel for short rows)
    // is still one knob of both
    const oneStatement = TILED_BRANCH_ONE_STATEMENT;
    expect(detectKnobs(oneStatement, 'k.py').knobs.filter((k) => k.role === 'warps').map((k) => [k.name, k.kernels?.sort(), k.spans.length]))
      .toEqual([['num_warps', ['_gated_kernel', '_gated_kernel_tiled'], 2]]);
    // a tuned file with a number at both reads as a knob a launch; tied as the baseline's, they are one knob again,
    // and two numbers that differ (a hand edit) stay two knobs
    const baseline = detectKnobs(oneStatement, 'k.py');
    const tuned = applyKnobs(oneStatement, baseline, { num_warps: 8 });
    const own = detectKnobs(tuned, 'k.py');
    expect(own.knobs.filter((k) => k.role === 'warps').map((k) => k.name)).toEqual(['num_warps', 'num_warps@61']);
    const tied = tiedAsIn(tuned, own, oneStatement, baseline).knobs.filter((k) => k.role === 'warps');
    expect(tied.map((k) => [k.name, k.value, k.spans.length, k.kernels?.sort()])).toEqual([['num_warps', 8, 2, ['_gated_kernel', '_gated_kernel_tiled']]]);
    expect(applyKnobs(tuned, tiedAsIn(tuned, own, oneStatement, baseline), { num_warps: 2 }).match(/num_warps=2/g)?.length).toBe(2);
    const edited = tuned.replace('BLOCK_SIZE=BLOCK_SIZE, num_warps=8)\n    return c', 'BLOCK_SIZE=BLOCK_SIZE, num_warps=4)\n    return c');
    expect(edited).not.toBe(tuned);
    const apart = detectKnobs(edited, 'k.py');
    expect(tiedAsIn(edited, apart, oneStatement, baseline).knobs.filter((k) => k.role === 'warps').map((k) => [k.name, k.value])).toEqual([['num_warps', 8], ['num_warps@61', 4]]);
  });

  it('changes nothing when every knob keeps its value, and leaves the helper alone', () => {
    expect(applyKnobs(src, set, Object.fromEntries(set.knobs.map((k) => [k.name, k.value])))).toBe(src);
    expect(set.knobs.some((k) => k.spans.some(([s]) => s < src.indexOf('@triton.jit')))).toBe(false);
  });
});

describe('autotune lists built in code, and heuristics', () => {
  const src = fixture('triton_autotune_built.py');
  const set = detectKnobs(src, 'k.py');

  it('reads the values a loop feeds into triton.Config, named for the config key they feed', () => {
    expect(find(set.knobs, 'BLOCK_M[0]')).toMatchObject({ role: 'block', value: 64 });
    expect(find(set.knobs, 'BLOCK_M[1]')).toMatchObject({ role: 'block', value: 128 });
    expect(find(set.knobs, 'num_warps[0]')).toMatchObject({ role: 'warps', value: 4 });
    expect(find(set.knobs, 'num_warps[1]')).toMatchObject({ role: 'warps', value: 8 });
    expect(find(set.knobs, 'cfg0.num_stages')).toMatchObject({ role: 'stages', value: 3 });
    const out = applyKnobs(src, set, { 'BLOCK_M[1]': 256, 'num_warps[0]': 2 });
    expect(out).toContain('    for bm in [64, 256]:\n        for warps in [2, 8]:\n');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('reads the values a comprehension feeds into triton.Config (a list and a tuple)', () => {
    expect(find(set.knobs, 'BLOCK[0]')).toMatchObject({ role: 'block', value: 256 });
    expect(find(set.knobs, 'BLOCK[1]')).toMatchObject({ role: 'block', value: 1024 });
    expect(find(set.knobs, 'num_warps[0]@31')).toMatchObject({ role: 'warps', value: 2 });
    const out = applyKnobs(src, set, { 'BLOCK[0]': 512, 'num_warps[1]@31': 8 });
    expect(out).toContain('for b in [512, 1024] for w in (2, 8)]');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('reads @triton.heuristics lambdas: a covering block guarded, num_warps replaced, other keys ignored', () => {
    const block = find(set.knobs, 'heuristic.BLOCK_SIZE');
    expect(block).toMatchObject({ kind: 'triton-heuristic', guard: 'covers', searched: false, expression: 'triton.next_power_of_2(args["n_cols"])' });
    const warps = find(set.knobs, 'heuristic.num_warps');
    expect(warps).toMatchObject({ kind: 'triton-heuristic', role: 'warps', value: 0, expression: '8 if args["n_cols"] >= 2048 else 4' });
    expect(set.knobs.some((k) => k.name.includes('EVEN'))).toBe(false);
    const out = applyKnobs(src, set, { 'heuristic.num_warps': 16, 'heuristic.BLOCK_SIZE': 4096 });
    expect(out).toContain('"num_warps": lambda args: 16,');
    expect(out).toContain('"BLOCK_SIZE": lambda args: max(4096, triton.next_power_of_2(args["n_cols"])),');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('a launch through an autotuned kernel with a meta grid adds no launch knobs', () => {
    expect(set.knobs.filter((k) => k.kind === 'triton-computed' || k.kind === 'triton-launch')).toEqual([]);
  });
});

describe('launch options a launch leaves to Triton', () => {
  // As lecture code writes them: a literal block and Triton's default warps; a row kernel whose block is the row.
  const src = LECTURE_GELU + '\n' + [
    'def softmax(x):', '    y = torch.empty_like(x)', '    M, N = x.shape', '    block_size = triton.next_power_of_2(N)',
    '    softmax_kernel[(M,)](', '        x_ptr=x, y_ptr=y, stride=x.stride(0),', '        n_cols=N, BLOCK_SIZE=block_size', '    )', '    return y', '',
    '@triton.jit', 'def softmax_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):',
    '    cols = tl.arange(0, BLOCK_SIZE)',
    '    row = tl.load(x_ptr + tl.program_id(0) * stride + cols, mask=cols < n_cols, other=-float("inf"))',
    '    e = tl.exp(row - tl.max(row, axis=0))',
    '    tl.store(y_ptr + tl.program_id(0) * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)', '',
  ].join('\n');
  const set = detectKnobs(src, 'k.py');

  it('a launch without num_warps gets it as a knob of that launch, written only when the search moves it', () => {
    const gelu = searchableKnobs(set, 'gelu_kernel').knobs;
    expect(gelu.map((k) => k.name).sort()).toEqual(['block_size', 'num_warps']);
    // its value is what Triton launches with when the launch does not say
    expect(find(gelu, 'num_warps')).toMatchObject({ kind: 'triton-launch-option', role: 'warps', value: 4, insert: 'num_warps', kernels: ['gelu_kernel'] });
    const out = applyKnobs(src, set, { block_size: 2048, num_warps: 8 });
    expect(out).toContain('    block_size = 2048\n');
    expect(out).toContain('(x, y, n, BLOCK_SIZE=block_size, num_warps=8)');
    expect(pythonSyntaxError(out)).toBeUndefined();
    expect(applyKnobs(src, set, { num_warps: 4 })).toBe(src);
  });

  it("the row kernel's search moves its own warps, not the other launcher's block", () => {
    // its block covers the row (left alone); before, the search fell back to every knob of the file: gelu's block
    const softmax = searchableKnobs(set, 'softmax_kernel').knobs;
    expect(softmax.map((k) => [k.name, k.kernels])).toEqual([['num_warps@24', ['softmax_kernel']]]);
    const out = applyKnobs(src, set, { 'num_warps@24': 16 });
    expect(out).toContain('        n_cols=N, BLOCK_SIZE=block_size, num_warps=16\n    )');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('one kernel launched alike from two launchers of one name (a softmax and a log-softmax): one warps knob, as one stages knob', () => {
    // autograd functions of a softmax and a log-softmax, each a `forward` launching the same looping row kernel with
    // a literal block; before, the warps were two knobs (the second launch's never timed by a spec of the first)
    const rows = [
      '@triton.jit', 'def rows_kernel(x_ptr, y_ptr, n_cols, LOG: tl.constexpr, BLOCK_SIZE: tl.constexpr):',
      '    for start in range(0, n_cols, BLOCK_SIZE):', '        cols = start + tl.arange(0, BLOCK_SIZE)',
      '        tl.store(y_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)', '',
      ...['Softmax', 'LogSoftmax'].flatMap((name, log) => [`class ${name}(torch.autograd.Function):`, '    @staticmethod', '    def forward(ctx, x):',
        '        y = torch.empty_like(x)', `        rows_kernel[(1,)](x, y, x.numel(), LOG=${log}, BLOCK_SIZE=128)`, '        return y', '']),
    ].join('\n');
    const both = detectKnobs(rows, 'k.py');
    const knobs = searchableKnobs(both, 'rows_kernel').knobs;
    expect(knobs.map((k) => [k.name, k.spans.length]).sort()).toEqual([['BLOCK_SIZE', 2], ['num_stages', 2], ['num_warps', 2]]);
    const out = applyKnobs(rows, both, { BLOCK_SIZE: 4096, num_warps: 16, num_stages: 3 });
    expect(out.split('BLOCK_SIZE=4096, num_stages=3, num_warps=16)').length).toBe(3);
    expect(pythonSyntaxError(out)).toBeUndefined();
  });

  it('two kernels launched with the same literal warps: a knob each, so tuning one leaves the other launch alone', () => {
    // the fixture's row kernel launched with num_warps=4 as written, once a tuned file launches the spec's kernel
    // with 4 too: before, the two literals were one knob, and moving it rewrote the other kernel's launch
    const src = fixture('triton_computed_launch.py').replace('        num_warps=num_warps,\n', '        num_warps=4,\n');
    const set = detectKnobs(src, 'k.py');
    const warps = set.knobs.filter((k) => k.role === 'warps' && k.value === 4 && !k.insert);
    expect(warps.map((k) => [k.kernels?.includes('_row_sum_kernel'), k.spans.length])).toEqual([[false, 1], [true, 1]]);
    const own = searchableKnobs(set, '_scale_rows_kernel').knobs.find((k) => k.role === 'warps')!;
    const out = applyKnobs(src, set, { [own.name]: 8 });
    expect(out).toContain('        num_warps=8,\n');
    expect(out).toContain('BLOCK=min(1024, triton.next_power_of_2(n_cols)), num_warps=4)');
    // and a third kernel launched alike in two branches, after those, is still one knob of its own
    const third = `${src}\n\ndef row_sum_either(x, n_cols, fast):\n    if fast:\n`
      + '        _gelu_kernel[(1,)](x, x, n_cols, BLOCK=256, num_warps=4)\n    else:\n        _gelu_kernel[(1,)](x, x, n_cols, BLOCK=256, num_warps=4)\n';
    const gelu = detectKnobs(third, 'k.py').knobs.filter((k) => k.kernels?.includes('_gelu_kernel') && k.value === 4 && k.role === 'warps');
    expect(gelu.map((k) => k.spans.length)).toEqual([2]);
  });

  it('a module constant passed by name at several launches, after a launch whose keyword of that name is computed, is one knob', () => {
    // a small-row kernel launched with a computed block on lines of their own, then the looping kernel launched
    // with the module's BLOCK_SIZE, in two launchers: the keyword line `BLOCK_SIZE=small,` is no assignment
    const src = ['import torch', 'import triton', 'import triton.language as tl', '', 'BLOCK_SIZE = 1024', 'NUM_WARPS = 4', '',
      '@triton.jit', 'def small_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):', '    tl.load(x_ptr + tl.arange(0, BLOCK_SIZE))', '',
      '@triton.jit', 'def loop_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):',
      '    for start in range(0, n, BLOCK_SIZE):', '        tl.load(x_ptr + start + tl.arange(0, BLOCK_SIZE))', '',
      ...['run', 'run_again'].flatMap((fn) => [`def ${fn}(x):`, '    n = x.numel()', '    if n <= 1024:', '        small = triton.next_power_of_2(n)',
        '        small_kernel[(1,)](', '            x,', '            n,', '            BLOCK_SIZE=small,', '            num_warps=NUM_WARPS,', '        )',
        '    else:', '        loop_kernel[(1,)](', '            x,', '            n,', '            BLOCK_SIZE=BLOCK_SIZE,', '            num_warps=NUM_WARPS,', '        )', '']),
    ].join('\n');
    const set = detectKnobs(src, 'k.py');
    // (each launcher's stages, left to Triton, are knobs of their own beside these)
    const loop = searchableKnobs(set, 'loop_kernel').knobs.filter((k) => !k.insert);
    expect(loop.map((k) => [k.name.replace(/@\d+$/, ''), k.kind, k.value]).sort()).toEqual([['BLOCK_SIZE', 'py-constant', 1024], ['NUM_WARPS', 'py-constant', 4]]);
    // the constant's line is one knob's place, whichever launches reach it
    const at = src.indexOf('BLOCK_SIZE = 1024') + 'BLOCK_SIZE = '.length;
    expect(set.knobs.filter((k) => k.spans.some((sp) => sp[0] === at))).toHaveLength(1);
    const block = loop.find((k) => k.name.startsWith('BLOCK_SIZE'))!;
    expect(applyKnobs(src, set, { [block.name]: 4096 })).toContain('\nBLOCK_SIZE = 4096\n');
  });

  it('an autotuned kernel gets no launch option at its launch (its configs set them)', () => {
    const tuned = src.replace("@triton.jit\ndef gelu_kernel", "@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=['n'])\n@triton.jit\ndef gelu_kernel")
      .replace("@triton.jit\ndef softmax_kernel", "@triton.heuristics({'num_warps': lambda a: 8})\n@triton.jit\ndef softmax_kernel");
    const knobs = detectKnobs(tuned, 'k.py').knobs;
    expect(knobs.filter((k) => k.insert)).toEqual([]);
    expect(knobs.map((k) => k.name)).toContain('cfg0.num_warps');
  });
});

describe('meta-parameters passed by position, from the launcher\'s own parameter defaults', () => {
  // as a small project writes a matmul: tiles as the launcher's defaults, handed to the kernel by position
  const src = [
    'import torch', 'import triton', 'import triton.language as tl', '',
    '@triton.jit', 'def mm_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):',
    '    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)', '    for k in range(0, K, BLOCK_K):',
    '        acc += tl.dot(tl.load(a + tl.arange(0, BLOCK_M)[:, None] + tl.arange(0, BLOCK_K)[None, :]), tl.load(b + tl.arange(0, BLOCK_K)[:, None] + tl.arange(0, BLOCK_N)[None, :]))',
    '    tl.store(c + tl.arange(0, BLOCK_M)[:, None] + tl.arange(0, BLOCK_N)[None, :], acc)', '',
    'def mm(A, B, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32):', '    M, K = A.shape', '    N = B.shape[1]', '    C = torch.empty((M, N))',
    '    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))',
    '    mm_kernel[grid](', '        A, B, C, M, N, K,', '        BLOCK_M, BLOCK_N, BLOCK_K', '    )', '    return C', '',
  ].join('\n');
  const set = detectKnobs(src, 'k.py');

  it('the defaults are the tiles; warps and stages the launch leaves to Triton are knobs added after the last argument', () => {
    expect(set.knobs.map((k) => [k.name, k.kind, k.value])).toEqual([
      ['BLOCK_M', 'py-constant', 128], ['BLOCK_N', 'py-constant', 128], ['BLOCK_K', 'py-constant', 32],
      ['num_warps', 'triton-launch-option', 4], ['num_stages', 'triton-launch-option', 0]]);
    const out = applyKnobs(src, set, { BLOCK_M: 64, BLOCK_K: 64, num_warps: 8, num_stages: 3 });
    expect(out).toContain('def mm(A, B, BLOCK_M=64, BLOCK_N=128, BLOCK_K=64):');
    expect(out).toContain('        BLOCK_M, BLOCK_N, BLOCK_K, num_stages=3, num_warps=8\n    )');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });
});

describe('a matmul whose launcher picks its tiles per shape from tuple assignments of literals', () => {
  const src = fixture('triton_gram_per_shape.py');
  const set = searchableKnobs(detectKnobs(src, 'gram.py'), 'gram_kernel');

  it('searches the tiles the kernel steps its programs by in a helper it calls (by position and by keyword), not as blocks that must cover a row', () => {
    expect(set.knobs.map((k) => k.name)).toEqual(['BM', 'BN', 'BK', 'num_warps', 'num_stages']);
    for (const name of ['BM', 'BN']) expect(find(set.knobs, name)).toMatchObject({ kind: 'triton-computed', value: 0 });
    expect(find(set.knobs, 'BM').guard).toBeUndefined();
    expect(find(set.knobs, 'BN').guard).toBeUndefined();
  });

  it("reckons each from the literal of the statement that assigns it last, over a matmul tile's domain (16-256)", () => {
    expect(set.knobs.map((k) => [k.name, k.typical])).toEqual([['BM', 64], ['BN', 128], ['BK', 128], ['num_warps', 4], ['num_stages', 4]]);
    for (const name of ['BM', 'BN', 'BK']) expect(find(set.knobs, name).domain).toEqual([16, 32, 64, 128, 256]);
  });

  it('writes one launch for every shape, and the grid follows its tiles', () => {
    const out = applyKnobs(src, set, { BM: 256, BN: 64, BK: 32, num_warps: 8, num_stages: 3 });
    expect(out).toContain('    grid = (batch * triton.cdiv(rows, 256) * triton.cdiv(rows, 64),)\n');
    expect(out).toContain('gram_kernel[grid](x, g, rows, depth, BM=256, BN=64, BK=32, num_stages=3, num_warps=8)');
    // the launcher's branches are left as written
    expect(out).toContain('        BM, BN, BK = 64, 128, 128\n');
    expect(pythonSyntaxError(out)).toBeUndefined();
  });
});
