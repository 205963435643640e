// The profile facts the panel and the report show, read from verdicts as the harness writes them.
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/contract/verdict';
import { profileFacts } from '../../src/extension/candidateView';
import { profileReportMarkdown } from '../../src/extension/profileReport';

const GPU: Verdict = {
  status: 'ok', reason: 'Correct on 3 shape(s) x 2 seeds; 1.84x the baseline (geometric mean).', speedup: 1.84, host: 'h200',
  shapes: [{ shape: { n: 4096 }, baseline_ms: 0.02, candidate_ms: 0.01, speedup: 2 }],
  compile: { n_regs: 40, n_spills: 2, shared: 16384 },
  profile: { memory_sol_pct: 81.5, sm_sol_pct: 20.1, achieved_occupancy_pct: 62.5, registers_per_thread: 40, arithmetic_intensity: 0.25, gflops: 900.5, gbytes_per_s: 3602, bottleneck: 'memory-bound', top_stalls: [{ reason: 'long_scoreboard', pct: 60 }] },
};

describe('profile facts', () => {
  it('pick registers, spills, shared memory, occupancy and the roofline position from a GPU verdict', () => {
    const p = profileFacts(GPU);
    expect(p).toMatchObject({ registers: 40, spills: 2, sharedMemoryBytes: 16384, occupancyPct: 62.5, intensity: 0.25, achievedGflops: 900.5, achievedGBps: 3602, bottleneck: 'memory-bound' });
    expect(p.other.memory_sol_pct).toBe('81.5');
    expect(p.other['top_stalls']).toContain('long_scoreboard');
  });

  it('read a CPU verdict (no GPU counters) without inventing any', () => {
    const p = profileFacts({ status: 'ok', reason: 'r', compile: { compiler: 'g++', vectorized_loops: 2 }, profile: { gflops: 9.6, gbytes_per_s: 0.45, arithmetic_intensity: 21.3, bottleneck: 'unknown' } });
    expect(p.registers).toBeUndefined();
    expect(p.occupancyPct).toBeUndefined();
    expect(p).toMatchObject({ intensity: 21.3, achievedGflops: 9.6, achievedGBps: 0.45 });
  });

  it('render as a markdown report with timings, profile, compile and rationale', () => {
    const md = profileReportMarkdown('softmax — c0012', GPU, { id: 'c0012', operator: 'llm', mode: 'improve', parents: ['c0003'], rationale: 'Vectorized loads.' });
    expect(md).toMatch(/^# softmax — c0012\n\nCandidate \*\*c0012\*\* by `llm\/improve` from c0003\./);
    expect(md).toContain('| n=4096 | 0.0200 | 0.0100 | 2.000x |');
    expect(md).toContain('| registers / thread | 40 |');
    expect(md).toContain('| occupancy | 62.5 % |');
    expect(md).toContain('| roofline | 0.25 FLOP/byte, 900.5 GFLOP/s, 3602.0 GB/s |');
    expect(md).toContain('## Rationale\n\nVectorized loads.');
  });
});
