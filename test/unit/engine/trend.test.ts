// Settings past a falling trend (trend.ts): replayed on the verdicts of two H100 tunes of Liger's kernels, in the
// order they came in, and on small cases of the rule's limits.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../../src/engine/candidate';
import { pastTrend, pastTrendReason } from '../../../src/engine/trend';

interface Recorded { id: string; knobs: Record<string, number>; at: number; shapes: number[] }
const recorded = JSON.parse(readFileSync(path.join(__dirname, 'fixtures/h100-warps-tunes.json'), 'utf8')) as Record<string, Recorded[]>;

const shapeOf = (i: number) => ({ shape: i });
function candidate(r: Recorded, judged: boolean): Candidate {
  const speedup = Math.exp(r.shapes.reduce((a, x) => a + Math.log(x), 0) / r.shapes.length);
  return { id: r.id, parents: r.id === 'c0000' ? [] : ['c0000'], operator: r.id === 'c0000' ? 'baseline' : 'tune', mode: 'tune',
    source: r.id, hash: r.id, knobs: r.id === 'c0000' ? undefined : r.knobs, state: judged ? 'done' : 'evaluating',
    verdict: judged ? { status: 'ok', reason: 'Correct.', speedup, shapes: r.shapes.map((s, i) => ({ shape: shapeOf(i), baseline_ms: 1, candidate_ms: 1 / s, speedup: s })) } : undefined,
    timings: { proposedAt: 0 } } as Candidate;
}

/** Each verdict in turn: the settings still pending that it placed past a trend, with the time of that verdict. */
function replay(rows: Recorded[]): Map<string, { at: number; reason: string }> {
  const cancelled = new Map<string, { at: number; reason: string }>();
  const order = [...rows].sort((a, b) => a.at - b.at);
  order.forEach((now) => {
    const cs = rows.filter((r) => !cancelled.has(r.id)).map((r) => candidate(r, r.at <= now.at));
    for (const c of cs) {
      const reason = pastTrendReason(c, cs);
      if (reason) cancelled.set(c.id, { at: now.at, reason });
    }
  });
  return cancelled;
}

describe('settings past a falling trend', () => {
  it('cancels Liger\'s GeGLU at two warps and at one once four warps read no faster than eight on any shape, before their verdicts', () => {
    const cancelled = replay(recorded.liger_geglu);
    expect([...cancelled.keys()]).toEqual(['c0003', 'c0005']);
    // four warps' verdict (c0002) came in at 16.9 s; two warps' (c0003) at 20.5 s, one warp's (c0005) at 46.0 s,
    // 0.22x, the slowest of the run. On the rows of 3072 (the fourth shape) four warps read 1.008, the run's fastest
    // there with sixteen (c0004), eight 1.004: a shape the warps do not move, no slope. Until 2026-12-05 that tie kept
    // two warps judged, and one warp was cancelled only at two warps' verdict (20.5 s)
    const why = (w: number) => `num_warps=${w} lies past num_warps=4 (c0002, 0.665x), which was no faster than num_warps=8 (c0001, 0.847x) on any shape and is far below the run's best (1.017x)`;
    expect(cancelled.get('c0003')).toEqual({ at: 16.9, reason: why(2) });
    expect(cancelled.get('c0005')).toEqual({ at: 16.9, reason: why(1) });
  });

  it('on Liger\'s SwiGLU (two launches\' warps), cancels only settings that were fastest on no shape, the run\'s best kept', () => {
    const rows = recorded.liger_swiglu;
    const cancelled = replay(rows);
    expect(cancelled.size).toBeGreaterThan(0);
    const fastest = rows[0].shapes.map((_, i) => Math.max(...rows.map((r) => r.shapes[i])));
    for (const id of cancelled.keys()) {
      const r = rows.find((x) => x.id === id)!;
      r.shapes.forEach((s, i) => expect(s).toBeLessThan(fastest[i]));
      expect(cancelled.get(id)!.at).toBeLessThan(r.at); // before its own verdict came in
    }
    // c0018 (2 and 16 warps) led the run at 1.036x; four and eight warps at 16 on the other launch had read 1.020x
    // and 1.021x by then, no slope below the best to read past
    expect(cancelled.has('c0018')).toBe(false);
  });

  it('reads no trend from a step that paid on one shape, nor from one near the best; a tie at a shape\'s fastest reading is no gain', () => {
    const base: Recorded = { id: 'c0000', knobs: {}, at: 0, shapes: [1, 1] };
    const at = (id: string, w: number, shapes: number[]): Recorded => ({ id, knobs: { BLOCK: 0, num_warps: w }, at: 1, shapes });
    const best = at('c0001', 16, [1.5, 1.5]);
    const check = (a: number[], b: number[]) => {
      const rows = [base, best, at('c0002', 4, a), at('c0003', 8, b)];
      return pastTrend('tune', rows.map((r) => candidate(r, true)))({ BLOCK: 0, num_warps: 2 });
    };
    expect(check([0.5, 0.6], [0.8, 0.9])).toMatch(/^num_warps=2 lies past num_warps=4 \(c0002/);
    expect(check([0.5, 0.95], [0.8, 0.9])).toBeUndefined(); // four warps beat eight on the second shape
    // four warps tie eight at the fastest reading of the second shape: a shape the warps do not move, a slope still
    expect(check([0.5, 1.7], [0.8, 1.7])).toMatch(/^num_warps=2 lies past num_warps=4 \(c0002/);
    expect(check([0.5, 1.72], [0.8, 1.7])).toBeUndefined(); // four warps beat eight there beyond the tie (1%)
    expect(check([1.4, 1.4], [1.45, 1.45])).toBeUndefined(); // four warps are not far below the best
    // a value left as the kernel computes it lies on no side, and another knob that differs makes another line
    expect(pastTrend('tune', [base, best, at('c0002', 4, [0.5, 0.6]), at('c0003', 8, [0.8, 0.9])].map((r) => candidate(r, true)))({ BLOCK: 0, num_warps: 0 })).toBeUndefined();
    expect(pastTrend('tune', [base, best, at('c0002', 4, [0.5, 0.6]), at('c0003', 8, [0.8, 0.9])].map((r) => candidate(r, true)))({ BLOCK: 64, num_warps: 2 })).toBeUndefined();
  });
});
