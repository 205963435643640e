// The suite's table: fast_p as KernelBench defines it (the share of all problems that are correct AND faster than p
// times the baseline), over the harness's ratio, KernelBench's own eager timing and torch.compile; per-problem wall
// times; and the self-judgement summary (counts by status, how many within 1.00 +- 0.03, the slowest ten).
import { describe, expect, it } from 'vitest';
import { fastP, selfJudgeSummary, selfJudgeTable, suiteJson, suiteTable, type SelfJudgement, type SuiteRow } from '../../src/cli/suiteReport';
import { SuiteProgress } from '../../src/cli/suiteProgress';

const row = (problem: string, correct: boolean, speedupEager?: number, more: Partial<SuiteRow> = {}): SuiteRow =>
  ({ problem, correct, speedupEager, tokens: 10, evalSeconds: 1, candidates: 2, wallSeconds: 3, ...more });

describe('fast_p', () => {
  // five problems: one wrong (whatever its speed), four correct at 0.8x, 1.0x, 1.6x and 2.5x
  const rows = [row('wrong', false, 9), row('slow', true, 0.8), row('even', true, 1.0), row('fast', true, 1.6), row('fastest', true, 2.5)];

  it('is the share of all problems correct and strictly faster than p', () => {
    expect(fastP(rows, 0, 'speedupEager')).toBe(4 / 5); // fast_0: correct
    expect(fastP(rows, 1.0, 'speedupEager')).toBe(2 / 5); // 1.0x itself is not faster
    expect(fastP(rows, 1.5, 'speedupEager')).toBe(2 / 5);
    expect(fastP(rows, 2.0, 'speedupEager')).toBe(1 / 5);
    expect(fastP([], 1, 'speedupEager')).toBeUndefined();
  });

  it('over torch.compile counts the problems measured that way and the unsolved ones; none from KernelBench\'s timing', () => {
    const some = [row('a', true, 2, { kernelbench: 1.2, speedupCompile: 1.1 }), row('b', true, 2), row('c', false)];
    expect(fastP(some, 1.0, 'speedupCompile')).toBe(1 / 2);
    const json = suiteJson(some) as { fastP: Record<string, Record<string, number | null>>; wallSeconds: number };
    expect(Object.keys(json.fastP)).toEqual(['eager', 'compile']);
    expect(json.fastP.eager['fast_1.5']).toBeCloseTo(2 / 3, 12);
    expect(json.wallSeconds).toBe(9);
  });

  it('the table shows both timings, the wall time of each problem and fast_p from the checked timing alone', () => {
    const table = suiteTable([row('l1/softmax', true, 1.84, { kernelbench: 1.31, wallSeconds: 42.5 }), row('l1/scan', false, undefined, { note: 'incorrect: off by one' })]);
    expect(table).toMatch(/^problem\s+correct\s+vs eager\s+KB eager\s+vs compile\s+tokens\s+eval s\s+wall s\s+note$/m);
    expect(table).toMatch(/l1\/softmax\s+yes\s+1\.84x\s+1\.31x\s+-\s+10\s+1\.0\s+42\.5/);
    expect(table).toMatch(/fast_p over eager\s+: fast_0\.0 50%\s+fast_1\.0 50%\s+fast_1\.5 50%\s+fast_2\.0 0%/);
    expect(table).not.toContain("KB's timing");
    expect(table).toContain('45.5 s of wall time');
  });
});

describe('self-judgement', () => {
  const j = (problem: string, status: string, speedup: number | undefined, wallSeconds: number): SelfJudgement =>
    ({ problem, status, speedup, reason: status === 'ok' ? 'Correct.' : 'The worker ran out of memory.', evalSeconds: wallSeconds - 1, wallSeconds });
  const rows = [j('a', 'ok', 1.0, 5), j('b', 'ok', 1.029, 7), j('c', 'ok', 0.95, 30), j('d', 'runtime_error', undefined, 12),
    ...Array.from({ length: 10 }, (_, i) => j(`e${i}`, 'ok', 1.001, 2 + i / 10))];

  it('counts by status, how many read 1.00 +- 0.03, the total time and the slowest ten', () => {
    const s = selfJudgeSummary(rows);
    expect(s.byStatus).toEqual({ ok: 13, runtime_error: 1 });
    expect(s.within).toBe(12); // c reads 0.95; d is not ok
    expect(s.wallSeconds).toBeCloseTo(5 + 7 + 30 + 12 + 10 * 2 + 4.5, 9);
    expect(s.slowest.map((r) => r.problem)).toEqual(['c', 'd', 'b', 'a', 'e9', 'e8', 'e7', 'e6', 'e5', 'e4']);
    const table = selfJudgeTable(rows);
    expect(table).toContain('self-judged: 14 problems; ok 13, runtime_error 1');
    expect(table).toContain('within 1.00 +- 0.03: 12 of 14');
    expect(table).toMatch(/^c\s+ok\s+0\.95x .*outside 1\.00 \+- 0\.03$/m);
    expect(table).toMatch(/^d\s+runtime_error\s+-.*The worker ran out of memory\.$/m);
    expect(table).toMatch(/slowest: c 30\.0 s, d 12\.0 s, b 7\.0 s/);
  });

  it('says how long a resumed suite took over all its sessions', () => {
    const resumed = selfJudgeTable(rows, { elapsedSeconds: 278.8, jobs: 6, sessionsSeconds: [524.8, 278.8] });
    expect(resumed).toMatch(/6 at a time, this session took 278\.8 s; its 2 sessions took 803\.6 s in all\)/);
    expect(selfJudgeTable(rows, { elapsedSeconds: 30, jobs: 1, sessionsSeconds: [20, 30] })).toMatch(/\(its 2 sessions took 50\.0 s in all\)/);
    const once = selfJudgeTable(rows, { elapsedSeconds: 30, jobs: 6, sessionsSeconds: [30] });
    expect(once).toMatch(/this session took 30\.0 s\)/);
    expect(once).not.toMatch(/in all/);
  });
});

describe('the progress on stderr', () => {
  it('off a terminal: a line when a problem starts and one when it ends, with elapsed and ETA', () => {
    let t = 0;
    const lines: string[] = [];
    const p = new SuiteProgress({ write: (s: string) => lines.push(s) > 0 }, 4, 1, () => t);
    p.started('level1/1_relu');
    t = 10_000;
    p.finished('level1/1_relu', 'correct, 1.20x', 10);
    // one problem of this session took 10 s; two are left
    expect(p.etaS()).toBe(20);
    expect(lines).toEqual(['[2/4] level1/1_relu ...\n', '[2/4] level1/1_relu: correct, 1.20x (10.0 s); elapsed 10s, ETA 20s\n']);
    p.stop();
  });

  it('on a terminal: one bar, rewritten, with the problem being judged', () => {
    let t = 0;
    const out: string[] = [];
    const p = new SuiteProgress({ write: (s: string) => out.push(s) > 0, isTTY: true }, 10, 0, () => t);
    p.started('level2/3_gemm');
    t = 65_000;
    expect(p.bar()).toBe('[------------------------] 0/10  level2/3_gemm (1m05s)  elapsed 1m05s  ETA ?');
    p.finished('level2/3_gemm', 'no correct kernel', 65);
    expect(p.bar()).toMatch(/^\[##-{22}\] 1\/10 {2}elapsed 1m05s {2}ETA 9m45s$/);
    expect(out.join('')).toContain('\r\x1b[2K[1/10] level2/3_gemm: no correct kernel (65.0 s)\n');
    p.stop();
  });
});

describe("KernelBench's timing in `kernelevolve evaluate`", () => {
  it('is shown beside the harness ratio, with the note where the two disagree', async () => {
    const { formatVerdict } = await import('../../src/cli/verdictFormat');
    const text = formatVerdict({
      status: 'ok', reason: 'Correct.', speedup: 2.0, speedup_interval: [1.9, 2.1],
      kernelbench: { speedup: 1.2, baseline_ms: 0.03, candidate_ms: 0.025, trials: 100, method: 'cuda_event' },
      notes: ["On shape {n=16} KernelBench's eager timing reads 1.20x where this harness reads 2.00x (1.90-2.10): the host side dominates."],
    });
    expect(text).toContain("KernelBench's timing: 1.20x (30.00 us / 25.00 us; eager calls, cuda_event, mean of 100; reported, not judged)");
    expect(text).toContain('note: On shape {n=16}');
    expect(formatVerdict({ status: 'ok', reason: 'Correct.', speedup: 1 })).not.toContain('KernelBench');
  });
});
