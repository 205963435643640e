// Speculation: the tuner proposes the next neighbours before the last verdicts are in, so the pool's slots stay
// busy and a budget that fits the pool runs as one wave; a speculative candidate whose parent's verdict makes it
// moot is stopped, and its budget unit stays spent. A real engine and tuner, a GPU host modelled in virtual time
// (parallel preparation, one timing lock), verdicts from a scripted landscape of the quick GELU's knobs (or the
// softmax example's, on a plateau).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { EvaluationJob, Evaluator, PoolJobOptions, PoolVerdict } from '../../../src/contract/job';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { EvolutionRun } from '../../../src/engine/evolutionRun';
import { REFUND_SHARE } from '../../../src/engine/proposalScheduler';
import { RunStore, type LoadedRun } from '../../../src/engine/runStore';
import { detectKnobs, knobValues, type KnobValues } from '../../../src/engine/knobs';
import { GreedyPolicy } from '../../../src/engine/selection';
import type { KernelSpec } from '../../../src/engine/spec';
import { TuneOperator } from '../../../src/engine/tuneOperator';
import { gridBest, ROW_MAX, TILED_BRANCH, TILED_BRANCH_ONE_STATEMENT } from './tritonLandscape';

const gelu = readFileSync(path.join(__dirname, '../../../scripts/gpu/tuner-kernels/quick_gelu/gelu.py'), 'utf8');
const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/gelu.py', kernel: 'quick_gelu_kernel' };
// the softmax example: three launch knobs (rows a program, warps, stages), a larger space than the GELU's
const softmax = readFileSync(path.join(__dirname, '../../../examples/triton/softmax/softmax.py'), 'utf8');
const softmaxSpec: KernelSpec = { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/softmax.py', kernel: 'softmax_kernel' };
// memory-bound: best at 2048-element blocks with 16 warps (off every Hopper start)
const gpuTime = (v: KnobValues) => Math.exp(0.3 * (Math.log2(v.BLOCK) - 11) ** 2 + 0.5 * (Math.log2(v.num_warps) - 4) ** 2);

/**
 * A GPU host in virtual time (vitest's fake timers): every evaluation prepares in parallel (compile, correctness:
 * `setupMs`), then times holding the device's one timing lock, first come first served (`timedMs`); a stopped
 * evaluation lets the lock go.
 */
class LockedGpu implements Evaluator {
  readonly hardware = 'nvidia-h200';
  readonly aborted: string[] = [];
  readonly starts: Array<{ id: string; at: number }> = [];
  readonly ends: Array<{ id: string; at: number }> = [];
  maxRunning = 0;
  private running = 0;
  private readonly t0 = Date.now();
  private holder?: string;
  private readonly waiting: Array<{ id: string; go: () => void }> = [];
  constructor(readonly totalSlots: number, private readonly setupMs: number, private readonly timedMs: number, private readonly fail: (v: KnobValues) => boolean = () => false,
    private readonly time: (v: KnobValues) => number = gpuTime, private readonly baseline = gelu,
    private readonly interval = 0) {}

  private release(id: string): void {
    const i = this.waiting.findIndex((w) => w.id === id);
    if (i >= 0) this.waiting.splice(i, 1);
    if (this.holder !== id) return;
    this.holder = undefined;
    const next = this.waiting.shift();
    if (next) {
      this.holder = next.id;
      next.go();
    }
  }

  async evaluate(job: EvaluationJob, opts: PoolJobOptions = {}): Promise<PoolVerdict> {
    opts.onStart?.('gpu');
    this.starts.push({ id: job.id, at: Date.now() - this.t0 });
    this.maxRunning = Math.max(this.maxRunning, ++this.running);
    let cancel: (() => void) | undefined;
    const onAbort = () => {
      this.aborted.push(job.id);
      this.release(job.id);
      cancel?.();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const step = (start: (done: () => void) => (() => void) | void) => new Promise<void>((resolve, reject) => {
      const stop = start(resolve);
      cancel = () => {
        if (stop) stop();
        reject(new Error('aborted'));
      };
    });
    try {
      await step((done) => { const t = setTimeout(done, this.setupMs); return () => clearTimeout(t); });
      await step((done) => {
        if (!this.holder) {
          this.holder = job.id;
          done();
        } else {
          this.waiting.push({ id: job.id, go: done });
        }
      });
      await step((done) => { const t = setTimeout(done, this.timedMs); return () => clearTimeout(t); });
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      this.release(job.id);
      this.running--;
    }
    this.ends.push({ id: job.id, at: Date.now() - this.t0 });
    const base = knobValues(detectKnobs(this.baseline, 'python'));
    const v = knobValues(detectKnobs(job.candidateSource, 'python'));
    if (this.fail(v)) return { status: 'incorrect', reason: 'Wrong results on shape {n: 3000017}.', host: 'gpu' };
    const speedup = this.time(base) / this.time(v);
    return { status: 'ok', reason: 'Correct.', speedup, ...(this.interval ? { speedup_interval: [speedup / (1 + this.interval), speedup * (1 + this.interval)] } : {}), shapes: [{ shape: { n: 16777216 }, baseline_ms: this.time(base), candidate_ms: this.time(v), speedup }], host: 'gpu' };
  }

  /** Evaluations (the baseline's excluded) started before the first of them ended: the first wave. */
  firstWave(): number {
    const firstEnd = Math.min(...this.ends.filter((e) => e.id !== 'c0000').map((e) => e.at));
    return this.starts.filter((s) => s.id !== 'c0000' && s.at < firstEnd).length;
  }
}

/** The tuner as it was: it waits for a parent's verdict before proposing from it. */
class WaitingTuner extends TuneOperator {
  override readonly speculates = false;
}

interface TuneOptions {
  speculate?: boolean;
  fail?: (v: KnobValues) => boolean;
  budget?: number;
  /** A run bound by time (seconds), each evaluation prepared in setupMs, timed on the landscape `time`. */
  timeS?: number;
  setupMs?: number;
  /** Each evaluation's time under the timing lock (default 300 ms). */
  timedMs?: number;
  time?: (v: KnobValues) => number;
  /** The softmax example instead of the quick GELU. */
  softmax?: boolean;
  /** Another kernel instead (tuned without the knowledge base's starts). */
  kernel?: { source: string; spec: KernelSpec };
  /** Each verdict's interval: the speedup to within this relative margin. */
  interval?: number;
  store?: RunStore;
  resume?: LoadedRun;
  /** false: settings past a falling trend are proposed and judged too (config "tunePastTrend": false). */
  pastTrend?: boolean;
}

/** A 20-candidate tune of the quick GELU on a GPU host of `slots` slots whose evaluations take 8 s to prepare and
 *  0.3 s to time (a first compile and the checks dominate, as on the H200); returns the run's wall time in virtual ms. */
async function tune(slots: number, opts: TuneOptions = {}) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    const t0 = Date.now();
    const [source, kernelSpec] = opts.kernel ? [opts.kernel.source, opts.kernel.spec] : opts.softmax ? [softmax, softmaxSpec] : [gelu, spec];
    const evaluator = new LockedGpu(slots, opts.setupMs ?? 8000, opts.timedMs ?? 300, opts.fail, opts.time, source, opts.interval);
    const fileName = path.basename(kernelSpec.sourcePath);
    const knowledge = opts.kernel ? { knowledgeDir: null } : {};
    const trend = opts.pastTrend === false ? { pastTrend: false } : {};
    const op = opts.speculate === false ? new WaitingTuner({ fileName, ...knowledge, ...trend }) : new TuneOperator({ fileName, ...knowledge, ...trend });
    const { resume, store } = opts;
    const run = new EvolutionRun({ runId: store?.runId ?? 's', runDir: store?.runDir ?? '/tmp/none', spec: kernelSpec, baselineSource: source, operators: [op], evaluator,
      policy: new GreedyPolicy(), limits: { budget: opts.budget ?? 20, ...(opts.timeS ? { timeS: opts.timeS } : {}) }, confirmTop: 0, ...trend,
      ...(resume ? { resume: { candidates: resume.candidates, used: resume.record.counters.used } } : {}) });
    if (store) run.on(store.listener);
    let finished = false;
    const done = run.run().then((s) => {
      finished = true;
      return s;
    });
    while (!finished) await vi.advanceTimersByTimeAsync(10);
    const summary = await done;
    return { run, evaluator, summary, wallMs: Date.now() - t0 };
  } finally {
    vi.useRealTimers();
  }
}

describe('speculation', () => {
  it('runs a 20-candidate budget as one wave on a pool of 24 slots, sooner than waiting for verdicts', async () => {
    const speculating = await tune(24);
    expect(speculating.evaluator.firstWave()).toBe(20);
    const waiting = await tune(24, { speculate: false });
    expect(waiting.evaluator.firstWave()).toBeLessThan(12);
    // the drafts and their neighbours are judged beside the baseline: the baseline and 19 candidates at once (8 s of
    // preparation and 20 timed sections of 0.3 s); the last unit is kept for a per-shape table until the baseline's
    // verdict shows one shape, and goes to a 20th candidate then. Waiting takes the baseline, then two waves or more.
    // The units of candidates cancelled as moot come back (up to a quarter of the budget) and are judged after the
    // first wave's verdicts, beside its last ones. (17.5 s here, 16.6 s when those units stayed spent; 20.8 s when
    // the drafts waited for the baseline's verdict, 27.3 s waiting for every verdict)
    expect(speculating.evaluator.starts.filter((s) => s.at < 100).length).toBe(20);
    expect(speculating.wallMs).toBeLessThanOrEqual(8300 + 8300 + 1000);
    expect(waiting.wallMs).toBeGreaterThan(speculating.wallMs + 4000);
    expect(speculating.summary.best!.speedup).toBeGreaterThanOrEqual(waiting.summary.best!.speedup);
  });

  it('keeps all 12 slots of a pool busy from the first wave on', async () => {
    const { evaluator } = await tune(12);
    expect(evaluator.firstWave()).toBe(12);
    expect(evaluator.maxRunning).toBe(12);
  });

  it('stops the speculative children of a draft that turns out wrong; each cancelled one gives its budget unit back, up to a quarter of the budget', async () => {
    // the second Hopper start (2048-element blocks, 8 warps) gives wrong results, and so does every 2048 block
    const { run, evaluator, summary } = await tune(24, { fail: (v) => v.BLOCK === 2048 });
    const draft = run.candidates.find((c) => c.mode === 'draft' && c.knobs?.BLOCK === 2048 && c.knobs?.num_warps === 8)!;
    expect(draft.verdict?.status).toBe('incorrect');
    const children = run.candidates.filter((c) => c.parents[0] === draft.id && c.speculative);
    expect(children.length).toBeGreaterThan(0);
    for (const c of children) {
      expect(c.state).toBe('cancelled');
      expect(c.cancelled).toMatch(new RegExp(`^its parent ${draft.id} is incorrect`));
      expect(c.verdict).toBeUndefined();
      // stopped when its parent's verdict came in, not judged to the end
      expect(evaluator.aborted).toContain(c.id);
      expect(evaluator.ends.map((e) => e.id)).not.toContain(c.id);
    }
    // counted: 20 proposals judged, and one more for each cancelled one up to REFUND_SHARE of the budget (the rest
    // stay spent: a run of moot speculation still ends)
    const cancelled = run.candidates.filter((c) => c.state === 'cancelled');
    const refunded = Math.min(cancelled.length, Math.round(20 * REFUND_SHARE));
    expect(refunded).toBeGreaterThan(0);
    expect(run.candidates.length - 1).toBe(20 + refunded);
    expect(run.candidates.filter((c) => c.state === 'done').length - 1).toBe(20 + refunded - cancelled.length);
    expect(summary.best!.speedup).toBeGreaterThan(1);
  });

  it('keeps a cancelled candidate cancelled in the run store: a resumed run does not judge it', async () => {
    const fail = (v: KnobValues) => v.BLOCK === 2048;
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-spec-'));
    try {
      const store = RunStore.create({ spec, options: { budget: 20 }, hosts: [{ name: 'gpu', slots: 24 }], workspace: ws });
      const first = await tune(24, { fail, store });
      const cancelledIds = first.run.candidates.filter((c) => c.state === 'cancelled').map((c) => c.id);
      expect(cancelledIds.length).toBeGreaterThan(0);
      const loaded = RunStore.load(store.runDir);
      expect(loaded.candidates.filter((c) => c.state === 'cancelled').map((c) => c.id)).toEqual(cancelledIds);
      expect(loaded.candidates.find((c) => c.id === cancelledIds[0])!.cancelled).toMatch(/^its parent c\d{4} /);
      expect(loaded.record.counters.used).toBe(20);
      // resumed with 4 more units: only new candidates are judged
      const second = await tune(24, { fail, budget: 24, resume: loaded });
      const judgedAgain = second.evaluator.starts.map((s) => s.id);
      expect(judgedAgain.length).toBeGreaterThan(0);
      for (const id of cancelledIds) expect(judgedAgain).not.toContain(id);
      expect(judgedAgain.every((id) => Number(id.slice(1)) > 20)).toBe(true);
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });

  it('on a plateau with falling slopes around it, judges every setting it reaches on the plateau and ends with its answer well inside its time', async () => {
    // the softmax example's knobs on a plateau: every setting within two steps of 4 rows a program, 4 warps and 2
    // stages within 1% of the others (the judge's intervals say +-2%), the rest 20% slower and more, slower the
    // further out; 12 slots, 3 s to prepare each candidate (a warm host), at most two minutes
    const off = (v: KnobValues) => Math.abs(Math.log2(v.row_block) - 2) + Math.abs(Math.log2(v.num_warps) - 2) + Math.abs(v.num_stages - 2);
    const plateau = (v: KnobValues) => {
      const jitter = 1 + 0.01 * (((v.row_block * 7 + v.num_warps * 13 + v.num_stages * 5) % 11) / 10);
      return (off(v) <= 2 ? 1 : 1.2 + 0.1 * off(v)) * jitter;
    };
    const { run, evaluator, summary } = await tune(12, { budget: 2000, timeS: 120, setupMs: 3000, time: plateau, softmax: true, interval: 0.02 });
    const judged = run.candidates.filter((c) => c.state === 'done');
    const cancelled = run.candidates.filter((c) => c.state === 'cancelled');
    // what is cancelled lies off the plateau: past a slope already seen falling (trend.ts), or a moot speculative
    // child; no plateau setting the tuner reached goes unjudged (with every pending child of the best expanded first,
    // before the speculation rules of speculation.ts: 89 judged, 117 stopped)
    expect(judged.length).toBeGreaterThanOrEqual(100);
    for (const c of cancelled) expect(off(c.knobs as KnobValues)).toBeGreaterThan(2);
    expect(cancelled.filter((c) => /lies past/.test(c.cancelled ?? '')).length).toBeGreaterThan(0);
    expect(evaluator.maxRunning).toBe(12);
    // the tuner runs out of settings worth judging, and the run ends well inside its two minutes (it judged 250 or
    // more in the whole two minutes while falling slopes ruled nothing out)
    expect(Math.max(...evaluator.ends.map((e) => e.at))).toBeLessThan(60_000);
    // the answer: the plateau (within its 2% intervals of the fastest setting judged)
    const fastest = Math.min(...judged.filter((c) => c.knobs).map((c) => plateau(c.knobs as KnobValues)));
    expect(summary.best!.speedup).toBeGreaterThan(plateau({ row_block: 1, num_warps: 1, num_stages: 1 }) / fastest / 1.02);
  });

  it('with settings past a falling trend judged too ("tunePastTrend": false), keeps all 12 slots judging for the whole two minutes', async () => {
    // the same plateau: the throughput bench's setting, where a queue that runs dry would measure the search, not
    // the judge; a step that loses still does not take its speculative children down with it
    const off = (v: KnobValues) => Math.abs(Math.log2(v.row_block) - 2) + Math.abs(Math.log2(v.num_warps) - 2) + Math.abs(v.num_stages - 2);
    const plateau = (v: KnobValues) => (off(v) <= 2 ? 1 : 1.2 + 0.1 * off(v)) * (1 + 0.01 * (((v.row_block * 7 + v.num_warps * 13 + v.num_stages * 5) % 11) / 10));
    const { run, evaluator } = await tune(12, { budget: 2000, timeS: 120, setupMs: 3000, time: plateau, softmax: true, interval: 0.02, pastTrend: false });
    const judged = run.candidates.filter((c) => c.state === 'done').length;
    const stopped = run.candidates.filter((c) => c.state === 'cancelled');
    expect(judged).toBeGreaterThanOrEqual(250);
    expect(stopped.length).toBeLessThanOrEqual(judged / 20);
    expect(stopped.filter((c) => /lies past/.test(c.cancelled ?? ''))).toEqual([]);
    expect(evaluator.maxRunning).toBe(12);
  }, 120_000); // two simulated minutes of a full queue: CPU-bound, past 30 s on a loaded two-core machine

  it('refines a draft that pays a step further along its line too, in the same wave: the best launch of few long rows lies there', async () => {
    // a row walked in blocks by one program (few long rows, ten units: 20% of a 50-point grid): larger blocks on more
    // warps keep more loads in flight, each thread best at 256 elements a step; the drafts bracket the written 1024
    // on 4 warps, the largest at 4096 on 16 warps, and the best launch is 8192 on 32, a step beyond it
    const rows = (v: KnobValues) => {
      const warps = v.num_warps || 4;
      return Math.exp(0.15 * (13 - Math.log2(v.BLOCK_SIZE)) + 0.15 * (5 - Math.log2(warps)) + 0.3 * (Math.log2(v.BLOCK_SIZE / warps) - 8) ** 2);
    };
    const grid = gridBest({ BLOCK_SIZE: [512, 1024, 2048, 4096, 8192], num_warps: [2, 4, 8, 16, 32], num_stages: [1, 3] }, rows,
      { BLOCK_SIZE: 1024, num_warps: 4, num_stages: 3 }, () => undefined);
    const kernel = { source: ROW_MAX, spec: { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/rows.py', kernel: 'row_max_kernel' } as KernelSpec };
    const { run, evaluator, summary } = await tune(12, { kernel, budget: 10, time: rows });
    const draft = run.candidates.find((c) => c.mode === 'draft' && c.knobs?.BLOCK_SIZE === 4096)!;
    expect(draft.knobs).toMatchObject({ BLOCK_SIZE: 4096, num_warps: 16 });
    const children = run.candidates.filter((c) => c.parents[0] === draft.id);
    expect(children.every((c) => c.speculative)).toBe(true);
    // its first two children, proposed before its verdict (later ones come from the units of cancelled candidates)
    expect(children.slice(0, 2).map((c) => [c.knobs?.BLOCK_SIZE, c.knobs?.num_warps])).toEqual([[4096, 32], [8192, 32]]);
    // one wave: every unit proposed before the first verdict
    expect(evaluator.firstWave()).toBe(10);
    expect(summary.best!.speedup / grid.best).toBeGreaterThanOrEqual(0.98);
  });

  it('a launcher with another device\'s branch (Liger\'s SwiGLU, softmax): on 20 slots judges each launch of the row kernel once', async () => {
    // on this Hopper only the row launch runs; its warps as computed are 16 here, best at 8 (a gentle slope: no
    // setting lies past a falling trend). Before, the drafts wrote both launches' warps and their children moved the
    // row launch's alone, so children of different drafts launched the row kernel alike and each was judged: on an
    // H100, 19 settings of 6 launches, queued at the timing lock for 11.5 s each (docs/benchmarks.md)
    // And where one statement computes both launches' warps (Liger's softmax), one knob moved at both launches.
    for (const source of [TILED_BRANCH, TILED_BRANCH_ONE_STATEMENT]) {
      const kernel = { source, spec: { specPath: '/x/spec.py', backend: 'triton', sourcePath: '/x/k.py', kernel: '_gated_kernel' } as KernelSpec };
      const rowWarps = (v: KnobValues) => v['num_warps@61'] || 16;
      const time = (v: KnobValues) => Math.exp(0.05 * (Math.log2(rowWarps(v)) - 3) ** 2);
      // SwiGLU's evaluations on the H200: about 12 s to prepare (references, compiles, checks), 1.3 s under the lock
      const { run, summary, evaluator } = await tune(20, { kernel, budget: 20, time, setupMs: 12_000, timedMs: 1300 });
      const judged = run.candidates.filter((c) => c.state === 'done' && c.operator !== 'baseline' && c.mode !== 'dispatch');
      const rows = judged.map((c) => rowWarps(knobValues(detectKnobs(c.source, 'python'))));
      expect(new Set(rows).size).toBe(rows.length);
      expect(rows.length).toBeLessThanOrEqual(5); // 1, 2, 4, 8 and 32 warps: the launches there are
      expect(summary.best!.speedup).toBeCloseTo(time({}) / time({ 'num_warps@61': 8 }), 6);
      // the last verdict at 19.8 s of virtual time; before, 15 judged and the last at 43.5 s, queued at the lock
      expect(Math.max(...evaluator.ends.map((e) => e.at))).toBeLessThan(25_000);
    }
  });
});
