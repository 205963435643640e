import { describe, expect, it } from 'vitest';
import { applyEdits, isVariantApplied, pendingHunks, planAccept } from '../../src/extension/acceptPlan';
import { KernelLocator } from '../../src/engine/kernelLocator';

const BASE = `#include <cstddef>
constexpr int BM = 8;
constexpr int BN = 8;

static float helper(float x) { return x; }

extern "C" void matmul(const float* a, float* c, int n) {
  for (int i = 0; i < n; i += BM) c[i] = helper(a[i]);
}
`;
const CAND = BASE.replace('BM = 8', 'BM = 64').replace('c[i] = helper(a[i]);', 'c[i] = a[i];\n  // unrolled');

async function plan(current: string, candidate = CAND) {
  const locator = await KernelLocator.get();
  return planAccept({ locator, grammar: 'cpp', kernel: 'matmul', fileLabel: 'k.cpp', baseline: BASE, candidate, current });
}

describe('planAccept', () => {
  it('turns the untouched file into the candidate exactly', async () => {
    const p = await plan(BASE);
    expect(p.ok).toBe(true);
    if (p.ok) {
      expect(applyEdits(BASE, p.edits)).toBe(CAND);
      expect(p.relocated).toBe(false);
    }
  });

  it('finds the kernel again by name when the file changed above it, and keeps the user\'s edit', async () => {
    const current = BASE.replace('#include <cstddef>', '#include <cstddef>\n#include <cmath>\n// user notes\n');
    const p = await plan(current);
    expect(p.ok).toBe(true);
    if (p.ok) {
      const out = applyEdits(current, p.edits);
      expect(out).toContain('// user notes');
      expect(out).toContain('constexpr int BM = 64;');
      expect(out).toContain('c[i] = a[i];\n  // unrolled');
      expect(p.relocated).toBe(true);
    }
  });

  it('refuses with a reason when the kernel was renamed', async () => {
    const p = await plan(BASE.replace('void matmul', 'void matmul_v2'));
    expect(p).toEqual({ ok: false, reason: expect.stringMatching(/matmul is no longer in k\.cpp/) });
  });

  it('refuses when a constant the candidate changes was edited meanwhile', async () => {
    // The user set BM to 16 after the run started; the plan must not overwrite that by guessing.
    const p = await plan(BASE.replace('BM = 8', 'BM = 16'), CAND);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.reason).toMatch(/constexpr int BM = 8;.*is no longer in k\.cpp/);
  });
});

describe('isVariantApplied', () => {
  const TUNED = BASE.replace('BM = 8', 'BM = 64'); // a tuned variant: its kernel's text is the baseline's
  async function applied(current: string, candidate: string) {
    return isVariantApplied({ locator: await KernelLocator.get(), grammar: 'cpp', kernel: 'matmul', baseline: BASE, candidate, current });
  }

  it('is not applied in the file as the run saw it, even when only a constant outside the kernel differs', async () => {
    expect(await applied(BASE, TUNED)).toBe(false);
    expect(await applied(BASE, CAND)).toBe(false);
  });

  it('is applied once the file has the candidate\'s kernel and its other changes, with the user\'s edits around them', async () => {
    expect(await applied(TUNED, TUNED)).toBe(true);
    expect(await applied(`// user notes\n${CAND}`, CAND)).toBe(true);
  });

  it('is not applied when only the kernel went in (an Undo of the constant, a Reject of that change)', async () => {
    expect(await applied(CAND.replace('BM = 64', 'BM = 8'), CAND)).toBe(false);
  });
});

describe('pendingHunks', () => {
  it('places each change in the lines of the accepted text, after the lines earlier changes added or removed', () => {
    const current = 'a\nb\nc\nd\ne\n';
    const expected = 'a\nB1\nB2\nc\ne\n';
    expect(pendingHunks(current, expected)).toEqual([
      { start: 1, newCount: 2, oldLines: ['b'] },
      { start: 4, newCount: 0, oldLines: ['d'] },
    ]);
  });
});
