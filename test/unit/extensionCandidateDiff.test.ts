import { describe, expect, it } from 'vitest';
import { highlightedDiff } from '../../src/extension/diffHighlighter';
import { diffLines, hunks, withContext } from '../../src/engine/sourceDiff';

const BASE = ['#include <cstddef>', 'constexpr int BM = 8;', 'constexpr int BN = 8;', '', 'extern "C" void f(float* c) {', '  c[0] = BM * BN;', '}', ''].join('\n');
const CAND = BASE.replace('BM = 8', 'BM = 64').replace('c[0] = BM * BN;', 'c[0] = BM * BN;\n  c[1] = 0;');

describe('line diff', () => {
  it('finds exactly the changed lines, numbered on both sides', () => {
    const ops = diffLines(BASE, CAND).filter((o) => o.kind !== 'ctx');
    expect(ops).toEqual([
      { kind: 'del', oldNo: 2, text: 'constexpr int BM = 8;' },
      { kind: 'add', newNo: 2, text: 'constexpr int BM = 64;' },
      { kind: 'add', newNo: 7, text: '  c[1] = 0;' },
    ]);
  });

  it('groups changes into hunks that rebuild the new text from the old', () => {
    const hs = hunks(BASE, CAND);
    expect(hs.map((h) => [h.oldStart, h.oldEnd])).toEqual([[1, 2], [6, 6]]);
    const lines = BASE.split('\n');
    for (const h of [...hs].reverse()) lines.splice(h.oldStart, h.oldEnd - h.oldStart, ...h.newLines);
    expect(lines.join('\n')).toBe(CAND);
  });

  it('folds long unchanged runs into one skip marker', () => {
    const a = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const b = a.replace('line 20', 'LINE 20');
    const out = withContext(diffLines(a, b), 2);
    expect(out.map((o) => o.kind)).toEqual(['skip', 'ctx', 'ctx', 'del', 'add', 'ctx', 'ctx', 'skip']);
  });
});

describe('highlighted diff', () => {
  it('colours C++ tokens for light and dark themes and keeps the text intact', async () => {
    const lines = await highlightedDiff(BASE, CAND, 'k.cpp');
    const added = lines.filter((l) => l.kind === 'add');
    expect(added.map((l) => l.tokens.map((t) => t.text).join(''))).toEqual(['constexpr int BM = 64;', '  c[1] = 0;']);
    const kw = added[0].tokens.find((t) => t.text === 'constexpr');
    expect(kw?.light).toMatch(/^#[0-9A-Fa-f]{6}/);
    expect(kw?.dark).toMatch(/^#[0-9A-Fa-f]{6}/);
    expect(kw?.light).not.toBe(kw?.dark);
  }, 90_000); // the first highlight compiles the C++ grammar: seconds on a busy machine
});
