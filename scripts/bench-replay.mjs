// `node scripts/bench-replay.mjs`: the tuner replayed against grids recorded on a GPU, on a machine without one.
// Each recorded grid is a uniform grid's verdicts as scripts/bench-tuner.mjs wrote them (grid.jsonl, kept in
// scripts/gpu/recorded/ as NAME.DATE-CALL.jsonl: each point's knob values and its per-shape baseline and candidate
// times). The real engine and tuner run a budget of that fraction of the grid's points (no knowledge-base starts,
// greedy), and each candidate's verdict is the recorded point of its settings: its times per shape against the
// median baseline time per shape of the whole grid, as bench-tuner scores them. A candidate outside the grid (a
// value no axis holds) gets the nearest point's times and is counted; a per-shape table gets, on each shape, the
// recorded time of the settings its row launches there (the table's own cost, a lookup, is not modelled).
// Evaluations take a seeded, jittered time on SLOTS slots with one timing lock, so the order in which verdicts
// come in, which decides where a one-wave budget's last units go, changes with each order
// (--orders). It prints, per grid, the tuner's best over the grid's best (both recorded figures) over the orders,
// and the same over the candidates the grid holds only (those it times as themselves, not as a nearest point): where
// the search judged settings outside the grid, the first figure may flatter it and the second is a lower bound.
// A recorded point is one reading: on kernels of few long rows, single readings move by 10-20%, so the replay
// compares search rules on one landscape each; the GPU bench judges them.
// usage: node scripts/bench-replay.mjs [--budget-fraction 0.2] [--orders 10] [--slots 12] [--refund-share S]
//        [--recorded DIR] [NAME ...]
//        [--trace] (--refund-share: the share of the budget that cancelled candidates may give back; default the
//        engine's; --trace: each order's candidates, their settings, modes, states and scores, on stderr)
//        (NAME: a recorded grid's file name without .jsonl; default every file in --recorded)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// the folders a recorded kernel's spec may be in (<folder>/<kernel>/spec.py), as the GPU bench names them
const SPEC_FOLDERS = ['scripts/heldout-kernels', 'scripts/public-kernels', 'scripts/gpu/tuner-kernels', 'examples/triton'];
// what Triton launches with where a launch leaves an option out (a knob value of 0)
const TRITON_DEFAULTS = { warps: 4, stages: 3 };

function parseArgs(argv) {
  const o = { fraction: 0.2, orders: 10, slots: 12, refundShare: undefined, trace: false, recorded: path.join(ROOT, 'scripts/gpu/recorded'), names: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--budget-fraction') o.fraction = Number(argv[++i]);
    else if (a === '--orders') o.orders = Number(argv[++i]);
    else if (a === '--slots') o.slots = Number(argv[++i]);
    else if (a === '--refund-share') o.refundShare = Number(argv[++i]);
    else if (a === '--trace') o.trace = true;
    else if (a === '--recorded') o.recorded = path.resolve(argv[++i]);
    else if (a.startsWith('--')) throw new Error(`unknown option ${a} (see the usage at the top of scripts/bench-replay.mjs)`);
    else o.names.push(a);
  }
  if (!o.names.length) o.names = fs.readdirSync(o.recorded).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length)).sort();
  return o;
}

/** The engine as the CLI runs it, bundled from the TypeScript source. */
async function loadEngine() {
  const { build } = await import('esbuild');
  const outfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ke-replay-')), 'engine.cjs');
  const contents = ['evolutionRun', 'tuneOperator', 'selection', 'knobs', 'kernelLocator', 'pairedScore']
    .map((m) => `export * from './src/engine/${m}';`).join('\n');
  await build({ stdin: { contents, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'node', format: 'cjs', outfile, logLevel: 'warning' });
  return createRequire(import.meta.url)(outfile);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** A recorded grid as an evaluator: preparation of 40-80 ms (seeded) in parallel, then 3 ms under one lock. */
class RecordedGrid {
  constructor(engine, grid, baselineValues, slots, seed) {
    Object.assign(this, { engine, grid, baselineValues, totalSlots: slots, hardware: 'nvidia-h200' });
    this.run = undefined; // the run it judges for (a table's rows name its candidates)
    this.random = engine.seededRandom(seed); // each order's evaluation times, reproducible
    this.lock = Promise.resolve();
    this.outside = 0; // evaluations scored as a nearest grid point (a candidate read again counts again)
    this.approximate = new Set(); // the candidates so scored
  }

  candidates() {
    return this.run?.candidates ?? [];
  }

  async evaluate(job, opts = {}) {
    opts.onStart?.('replay');
    const wait = (ms) => new Promise((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      opts.signal?.addEventListener('abort', () => {
        clearTimeout(t);
        reject(new Error('aborted'));
      }, { once: true });
    });
    await wait(40 + 40 * this.random());
    let release;
    const mine = new Promise((r) => { release = r; });
    const before = this.lock;
    this.lock = before.then(() => mine);
    await before;
    try {
      await wait(3);
    } finally {
      release();
    }
    // a per-shape table launches, on each shape, the settings of the candidate its row names; anything else, its own
    const isTable = /KERNELEVOLVE_\w+_BY_/.test(job.candidateSource);
    const table = isTable ? this.candidates().find((c) => c.id === job.id) : undefined;
    if (isTable && !table) return { status: 'runtime_error', reason: 'a table of no known candidate', host: 'replay' };
    const settingsOf = (source) => this.engine.knobValues(this.engine.detectKnobs(source, 'python'));
    const own = table ? undefined : settingsOf(job.candidateSource);
    const shapes = [];
    let outside = false;
    for (const key of this.grid.keys) {
      const shape = JSON.parse(key);
      let values = own;
      if (table) {
        const id = / \((c\d+), /.exec(String(table.knobs?.[shapeText(shape)] ?? ''))?.[1];
        const from = this.candidates().find((c) => c.id === id);
        if (!from) return { status: 'runtime_error', reason: `the table names no candidate for ${shapeText(shape)}`, host: 'replay' };
        values = settingsOf(from.source);
      }
      const { row, exact } = this.grid.nearest(values, this.baselineValues);
      outside ||= !exact;
      const candidateMs = row.shapes.find((s) => s.key === key).candidate_ms;
      shapes.push({ shape, baseline_ms: this.grid.baseline[key], candidate_ms: candidateMs, speedup: this.grid.baseline[key] / candidateMs });
    }
    if (outside) {
      this.outside++;
      this.approximate.add(job.id);
    }
    const speedup = Math.exp(shapes.reduce((a, s) => a + Math.log(s.speedup), 0) / shapes.length);
    return { status: 'ok', reason: 'Correct.', speedup, speedup_interval: [speedup / 1.02, speedup * 1.02], shapes, host: 'replay' };
  }
}

/** A spec shape as a table's row names it (tuneOperator.ts): `{rows=4096, cols=4096}`. */
const shapeText = (s) => `{${Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', ')}}`;

/** A recorded grid; `written`: the literal a computed knob's launcher writes (its `typical`), for its value 0. */
function loadGrid(file, written = {}) {
  const rows = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.status === 'ok' && r.shapes);
  const axes = Object.keys(rows[0].values);
  const keys = rows[0].shapes.map((s) => s.key);
  const baseline = Object.fromEntries(keys.map((k) => [k, median(rows.map((r) => r.shapes.find((s) => s.key === k).baseline_ms))]));
  const score = (r) => Math.exp(r.shapes.reduce((a, s) => a + Math.log(baseline[s.key] / s.candidate_ms), 0) / r.shapes.length);
  const effective = (name, v) => (v !== 0 ? v : written[name] ?? (/warps/i.test(name) ? TRITON_DEFAULTS.warps : /stages/i.test(name) ? TRITON_DEFAULTS.stages : v));
  const nearest = (values, base) => {
    let best;
    let distance = Infinity;
    for (const r of rows) {
      const d = axes.reduce((a, name) => a + Math.abs(Math.log2(effective(name, values[name] ?? base[name]) / r.values[name])), 0);
      if (d < distance) [best, distance] = [r, d];
    }
    return { row: best, exact: distance === 0 };
  };
  return { rows, keys, baseline, score, nearest, best: Math.max(...rows.map(score)) };
}

const opts = parseArgs(process.argv.slice(2));
const engine = await loadEngine();
await engine.KernelLocator.get();
console.log(`the tuner replayed on recorded grids: budget ${opts.fraction} of each grid's points, ${opts.orders} orders of verdicts, ${opts.slots} slots, no knowledge-base starts`);
console.log('| recorded grid | points | grid best | budget | tuner / grid (lowest / median / highest) | orders >= 98% | outside the grid | '
  + 'the grid\'s own points only (lowest / median / highest) | cancelled |');
console.log('|---|---:|---:|---:|---|---:|---:|---|---:|');
for (const name of opts.names) {
  const kernel = name.split('.')[0];
  const specPath = SPEC_FOLDERS.map((f) => path.join(ROOT, f, kernel, 'spec.py')).find((p) => fs.existsSync(p));
  if (!specPath) throw new Error(`no spec for ${kernel} in {${SPEC_FOLDERS.join(',')}}/${kernel}/`);
  const specText = fs.readFileSync(specPath, 'utf8');
  const sourcePath = path.resolve(path.dirname(specPath), /^SOURCE\s*=\s*["'](.+?)["']/m.exec(specText)[1]);
  if (!fs.existsSync(sourcePath)) throw new Error(`${sourcePath} is missing: run bash scripts/external-kernels.sh first`);
  const source = fs.readFileSync(sourcePath, 'utf8');
  // a computed knob assigned a literal before the launch (XXT's tiles, warps and stages) stands at that literal
  const written = Object.fromEntries(engine.detectKnobs(source, 'python').knobs.filter((k) => k.typical).map((k) => [k.name, k.typical]));
  const grid = loadGrid(path.join(opts.recorded, `${name}.jsonl`), written);
  const budget = Math.max(1, Math.floor(opts.fraction * grid.rows.length));
  const baselineValues = engine.knobValues(engine.detectKnobs(source, 'python'));
  const spec = { specPath, backend: 'triton', sourcePath, kernel: /^KERNEL\s*=\s*["'](.+?)["']/m.exec(specText)[1] };
  const ratios = [];
  const inGrid = [];
  let outside = 0;
  let cancelled = 0;
  for (let order = 1; order <= opts.orders; order++) {
    const evaluator = new RecordedGrid(engine, grid, baselineValues, opts.slots, order);
    const run = evaluator.run = new engine.EvolutionRun({ runId: 'replay', runDir: path.join(os.tmpdir(), 'ke-replay-none'), spec, baselineSource: source,
      operators: [new engine.TuneOperator({ fileName: path.basename(sourcePath), knowledgeDir: null })], evaluator, policy: new engine.GreedyPolicy(),
      limits: { budget }, confirmTop: 0, refundShare: opts.refundShare });
    await run.run();
    if (opts.trace) {
      console.error(`${name} order ${order}:`);
      const t0 = run.candidates[0].timings.proposedAt;
      const at = (t) => (t === undefined ? '-' : `${t - t0}`);
      for (const c of run.candidates) {
        // when it was proposed and when its verdict came in (ms from the baseline's proposal)
        console.error(`  ${c.id} ${c.mode ?? ''} from ${c.parents[0] ?? '-'} ${JSON.stringify(c.knobs ?? {})} ${c.state}${c.verdict ? ` ${engine.scoreOf(c).toFixed(3)}` : ''}`
          + ` [${at(c.timings.proposedAt)}..${at(c.timings.finishedAt)} ms]`);
      }
    }
    const judged = run.candidates.filter((c) => c.state === 'done' && c.verdict?.status === 'ok');
    ratios.push(Math.max(...judged.map((c) => engine.scoreOf(c))) / grid.best);
    // the same with only the candidates the grid holds: a lower bound where candidates outside it were judged
    inGrid.push(Math.max(0, ...judged.filter((c) => !evaluator.approximate.has(c.id)).map((c) => engine.scoreOf(c))) / grid.best);
    outside += evaluator.outside;
    cancelled += run.candidates.filter((c) => c.state === 'cancelled').length;
  }
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const sorted = [...ratios].sort((a, b) => a - b);
  const own = [...inGrid].sort((a, b) => a - b);
  console.log(`| ${name} | ${grid.rows.length} | ${grid.best.toFixed(2)}x | ${budget} | ${pct(sorted[0])} / ${pct(median(sorted))} / ${pct(sorted[sorted.length - 1])} | `
    + `${ratios.filter((r) => r >= 0.98).length} of ${ratios.length} | ${(outside / opts.orders).toFixed(1)} a run | `
    + `${pct(own[0])} / ${pct(median(own))} / ${pct(own[own.length - 1])} | ${(cancelled / opts.orders).toFixed(1)} a run |`);
}
