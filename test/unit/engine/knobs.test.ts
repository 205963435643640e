import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyKnobs, detectKnobs, domainOf, knobValues, roleOf, satisfiesConstraints } from '../../../src/engine/knobs';

const root = path.resolve(__dirname, '../../..');
const fixture = (f: string) => readFileSync(path.join(__dirname, 'fixtures', f), 'utf8');

describe('knob detection in C++ (the bundled example)', () => {
  const src = readFileSync(path.join(root, 'examples/cpp/matmul_blocked/matmul.cpp'), 'utf8');

  it('finds the block sizes of examples/cpp/matmul_blocked with power-of-two domains', () => {
    const set = detectKnobs(src, 'matmul.cpp');
    expect(set.knobs.map((k) => k.name).sort()).toEqual(['BLOCK_K', 'BLOCK_M', 'BLOCK_N']);
    for (const k of set.knobs) {
      expect(k.role).toBe('block');
      expect(k.kind).toBe('cpp-constexpr');
      expect(src.slice(k.spans[0][0], k.spans[0][1])).toBe(String(k.value));
      expect(k.domain).toContain(1);
      expect(k.domain).toContain(1024);
      expect(k.domain.every((v) => (v & (v - 1)) === 0)).toBe(true);
    }
  });

  it('changes only the literals', () => {
    const set = detectKnobs(src, 'matmul.cpp');
    const out = applyKnobs(src, set, { BLOCK_M: 8, BLOCK_N: 256 });
    expect(out).toMatch(/constexpr int BLOCK_M = 8;/);
    expect(out).toMatch(/constexpr int BLOCK_N = 256;/);
    expect(out.replace(/BLOCK_M = 8;/, `BLOCK_M = ${knobValues(set).BLOCK_M};`).replace(/BLOCK_N = 256;/, `BLOCK_N = ${knobValues(set).BLOCK_N};`)).toBe(src);
  });
});

describe('knob detection in C++ (any file-scope integer constexpr or #define)', () => {
  const src = `#include <cstddef>
#define TILE 32
#define UNROLL (4)
#define NAME "x"
#define SQUARE(x) ((x) * (x))
#ifndef KERNEL_H
#define KERNEL_H
#endif
// constexpr int COMMENTED = 8;
namespace cfg {
static constexpr int MC = 96, KC = 256;
constexpr std::size_t NR{8};
}
const int kThreads = 3;
enum { kBlockRows = 16, kMode };
constexpr float SCALE = 2.0f;
constexpr bool FAST = true;
static_assert(KC % NR == 0, "KC must be a multiple of NR");
void kernel(float* x, int n) {
  constexpr int LOCAL = 16;  // inside a function: not a file-scope knob
  for (int i = 0; i < n; i += LOCAL) x[i] *= SCALE;
}
`;
  const set = detectKnobs(src, 'k.cpp');
  const byName = Object.fromEntries(set.knobs.map((k) => [k.name, k]));

  it('takes integer constexprs (also in namespaces, several per line, brace-initialized), enum constants and integer #defines', () => {
    expect(Object.keys(byName).sort()).toEqual(['KC', 'MC', 'NR', 'TILE', 'UNROLL', 'kBlockRows', 'kThreads']);
    expect(byName.kBlockRows.role).toBe('block');
    expect(byName.TILE.kind).toBe('cpp-define');
    expect(byName.UNROLL.value).toBe(4);
    expect(byName.MC.value).toBe(96);
    expect(byName.NR.value).toBe(8);
  });

  it('gives sensible domains: block-like names by powers of two keeping odd current values, unroll up to 64', () => {
    expect(byName.MC.role).toBe('block');
    expect(byName.MC.domain).toContain(96);
    expect(byName.MC.domain).toContain(128);
    expect(byName.UNROLL.role).toBe('unroll');
    expect(Math.max(...byName.UNROLL.domain)).toBe(64);
    expect(byName.kThreads.role).toBe('generic');
  });

  it('orders block sizes first and keeps static_assert divisibility', () => {
    expect(set.knobs[0].role).toBe('block');
    expect(set.constraints).toEqual([{ a: 'KC', b: 'NR' }]);
    expect(satisfiesConstraints(set, { ...knobValues(set), KC: 128, NR: 16 })).toBe(true);
    expect(satisfiesConstraints(set, { ...knobValues(set), KC: 8, NR: 16 })).toBe(false);
  });

  it('rewrites several declarators on one line independently', () => {
    const out = applyKnobs(src, set, { MC: 64, KC: 512 });
    expect(out).toContain('static constexpr int MC = 64, KC = 512;');
  });
});

describe('knob detection in Triton', () => {
  it('reads @triton.autotune configs: dict entries and num_warps / num_stages', () => {
    const src = fixture('triton_matmul.py');
    const set = detectKnobs(src, 'matmul.py');
    const names = set.knobs.map((k) => k.name);
    expect(names).toEqual(expect.arrayContaining(['cfg0.BLOCK_M', 'cfg0.BLOCK_N', 'cfg0.BLOCK_K', 'cfg0.GROUP_M', 'cfg0.num_warps', 'cfg0.num_stages', 'cfg1.BLOCK_K', 'cfg1.num_warps']));
    expect(names.some((n) => n.includes('999') || n === 'BLOCK_M')).toBe(false);
    const warps = set.knobs.find((k) => k.name === 'cfg0.num_warps')!;
    expect(warps.domain).toEqual([1, 2, 4, 8, 16, 32]);
    const stages = set.knobs.find((k) => k.name === 'cfg1.num_stages')!;
    expect(stages.domain).toEqual([1, 2, 3, 4, 5, 6]);
    const bk = set.knobs.find((k) => k.name === 'cfg1.BLOCK_K')!;
    expect(Math.min(...bk.domain)).toBe(16);
    const out = applyKnobs(src, set, { 'cfg1.BLOCK_K': 64, 'cfg0.num_warps': 4 });
    expect(out).toContain(`triton.Config({'BLOCK_M': 64, 'BLOCK_N': 256, 'BLOCK_K': 64, 'GROUP_M': 8}, num_stages=4, num_warps=4)`);
    expect(out).toContain(`'GROUP_M': 8}, num_stages=3, num_warps=4)`);
  });

  it('reads launch-site meta-parameters, ties a grid literal to its block size, and follows a named block size', () => {
    const src = fixture('triton_softmax.py');
    const set = detectKnobs(src, 'softmax.py');
    const byName = Object.fromEntries(set.knobs.map((k) => [k.name, k]));
    expect(byName.BLOCK_SIZE.value).toBe(1024);
    expect(byName.BLOCK_SIZE.kind).toBe('triton-launch');
    expect(byName.num_warps.value).toBe(4);
    expect(byName.num_stages.value).toBe(2);
    expect(byName.BLOCK.spans.length).toBe(2); // BLOCK=256 and cdiv(n, 256) in the grid
    const named = set.knobs.find((k) => k.kind === 'py-constant')!;
    expect(named.value).toBe(512);
    expect(set.knobs.some((k) => k.name === 'ROWS_PER_PROGRAM')).toBe(false);
    const out = applyKnobs(src, set, { BLOCK: 128, [named.name]: 1024, num_warps: 8 });
    expect(out).toContain('add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)');
    expect(out).toContain('    BLOCK = 1024\n');
    expect(out).toContain('BLOCK_SIZE=1024, num_warps=8, num_stages=2)');
  });
});

describe('roles and domains', () => {
  it('recognizes the usual spellings of block sizes', () => {
    for (const n of ['BLOCK_M', 'TILE', 'BM', 'bn', 'TILE_K', 'KC', 'MR', 'CHUNK', 'BLOCK_SIZE', 'TR', 'TC', 'BR']) expect(roleOf(n)).toBe('block');
    for (const n of ['N', 'SCALE', 'kIters', 'ALIGN']) expect(roleOf(n)).toBe('generic');
    expect(roleOf('num_warps')).toBe('warps');
    expect(roleOf('NUM_STAGES')).toBe('stages');
  });

  it('keeps the current value in every domain', () => {
    expect(domainOf('block', 48, 'native')).toContain(48);
    expect(domainOf('warps', 4, 'triton')).toEqual([1, 2, 4, 8, 16, 32]);
    expect(domainOf('generic', 3000, 'native')).toContain(8192);
  });
});

describe('knob detection on the bundled examples', () => {
  const read = (p: string) => readFileSync(path.join(root, p), 'utf8');

  it('Triton matmul: block sizes assigned in the launcher and passed by name, num_warps and num_stages at the launch', () => {
    const src = read('examples/triton/matmul/matmul.py');
    const set = detectKnobs(src, 'matmul.py');
    const byName = Object.fromEntries(set.knobs.map((k) => [k.name, k]));
    expect(Object.keys(byName).sort()).toEqual(['BLOCK_K', 'BLOCK_M', 'BLOCK_N', 'num_stages', 'num_warps']);
    expect(byName.BLOCK_M).toMatchObject({ kind: 'py-constant', role: 'block', value: 32 });
    expect(Math.min(...byName.BLOCK_K.domain)).toBe(16);
    expect(byName.num_warps.domain).toEqual([1, 2, 4, 8, 16, 32]);
    expect(byName.num_stages.domain).toEqual([1, 2, 3, 4, 5, 6]);
    const out = applyKnobs(src, set, { BLOCK_M: 128, num_warps: 8, num_stages: 3 });
    expect(out).toContain('    BLOCK_M = 128\n');
    expect(out).toContain('num_warps=8, num_stages=3)');
  });

  it('Triton softmax: rows per program, warps and stages are searched; the block computed to cover a row is a guarded knob left alone', () => {
    const set = detectKnobs(read('examples/triton/softmax/softmax.py'), 'softmax.py');
    expect(set.knobs.map((k) => [k.name, k.kind, k.value, k.searched ?? true])).toEqual([
      ['BLOCK', 'triton-computed', 0, false], ['row_block', 'py-constant', 1, true], ['num_warps', 'triton-launch', 1, true],
      ['num_stages', 'triton-launch', 1, true]]);
  });

  it('CUDA axpby: threads per block and items per thread from #defines', () => {
    const set = detectKnobs(read('examples/cuda/axpby/axpby.cu'), 'axpby.cu');
    expect(set.knobs.map((k) => [k.name, k.kind, k.value])).toEqual([['BLOCK', 'cpp-define', 32], ['ITEMS', 'cpp-define', 1]]);
    expect(Math.max(...set.knobs[0].domain)).toBe(1024);
  });

  it('C++ softmax: the number of accumulators', () => {
    const set = detectKnobs(read('examples/cpp/softmax_rows/softmax.cpp'), 'softmax.cpp');
    expect(set.knobs.map((k) => [k.name, k.role, k.value])).toEqual([['VEC', 'unroll', 1]]);
  });
});
