// `npm run bench:tuner`: the tuner (`kernelevolve evolve --operators tune --budget B`) against an exhaustive
// grid over the same knobs, on real kernels with the real harness. For each kernel it reports the grid's
// best, the tuner's best, the fraction of the grid's best the tuner reached, and the evaluations each used.
// Both are scored as the engine scores candidates: against the median of every baseline timing of the bench,
// per shape, so a baseline timing that a busy machine slowed down decides nothing. The grid's TOP points and
// the tuner's best are then timed R more times, alternating, and compared on their median candidate times.
//
// usage: node scripts/bench-tuner.mjs [--budget 40] [--grid 8,16,32,64,128,256] [--repeat 3] [--top 3]
//                                     [--parallel 2] [--out DIR] [--knobs knobs.cjs] [--axis NAME=v1,v2 ...]
//                                     [--config hosts.json] [--budget-fraction F] [--final N] [--paired 3] [SPEC.py ...]
// (--axis fixes one knob's grid values, e.g. --axis num_stages=2,3,4 to keep a Triton grid small; --config gives
// the tuner's run the hosts a user would give it, e.g. a GPU host with several slots; --budget-fraction gives the
// tuner that fraction of the grid's points as its budget; --final N judges the grid's best and the tuner's best side
// by side N more times after the grid's best is chosen, and compares them on those timings alone; --no-starts runs
// the tuner without the knowledge base's starts (config "tuneStarts": false): the Hopper starts are earlier H200
// grids' winners, and a start copied from the answer proves nothing)
// Besides the uniform grid's best, the grid is read per shape: the best launch of each shape (the reachable
// per-shape speedup, the geometric mean of those), and the tuner's share of that gain, (tuner - 1) / (reachable - 1),
// from paired judgements: each shape's best launch judged against the tuner's best as its baseline, --paired times
// (pairedShare; the share from separately re-timed figures is printed beside it, and the share where each shape the
// tuner launches as its best launch does reads R = 1: the same code on that shape, apart from the table's lookup).
// It says where the kernel as written, or one of the tuner's starts, already is the grid's best.
// Default specs: every examples/cpp/*/spec.py and scripts/bench-tuner-kernels/*/spec.py.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CLI = path.join(ROOT, 'bin', 'kernelevolve.js');

function parse(argv) {
  const o = { budget: 40, grid: [8, 16, 32, 64, 128, 256], repeat: 3, top: 3, final: 0, paired: 3, parallel: 2, out: undefined, axis: {}, specs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--budget') o.budget = Number(argv[++i]);
    else if (a === '--budget-fraction') o.budgetFraction = Number(argv[++i]);
    else if (a === '--grid') o.grid = argv[++i].split(',').map(Number);
    else if (a === '--repeat') o.repeat = Number(argv[++i]);
    else if (a === '--parallel') o.parallel = Number(argv[++i]);
    else if (a === '--top') o.top = Number(argv[++i]);
    else if (a === '--final') o.final = Number(argv[++i]);
    else if (a === '--paired') o.paired = Number(argv[++i]);
    else if (a === '--out') o.out = path.resolve(argv[++i]);
    else if (a === '--knobs') o.knobs = path.resolve(argv[++i]);
    else if (a === '--config') o.config = path.resolve(argv[++i]);
    else if (a === '--no-starts') o.noStarts = true;
    else if (a === '--axis') {
      const [name, values] = argv[++i].split('=');
      o.axis[name] = values.split(',').map(Number);
    }
    else o.specs.push(path.resolve(a));
  }
  if (!o.specs.length) {
    for (const base of ['examples/cpp', 'scripts/bench-tuner-kernels']) {
      const dir = path.join(ROOT, base);
      if (!fs.existsSync(dir)) continue;
      for (const k of fs.readdirSync(dir).sort()) {
        const spec = path.join(dir, k, 'spec.py');
        if (fs.existsSync(spec)) o.specs.push(spec);
      }
    }
  }
  return o;
}

/**
 * The engine's knob detection, bundled from the TypeScript source so the grid uses exactly the tuner's knobs
 * (or a bundle made beforehand, `--knobs FILE`, on a machine without node_modules).
 */
async function loadKnobs(tmp, prebuilt) {
  const { createRequire } = await import('node:module');
  if (prebuilt) return createRequire(import.meta.url)(prebuilt);
  const { build } = await import('esbuild');
  const outfile = path.join(tmp, 'knobs.cjs');
  await build({ entryPoints: [path.join(ROOT, 'src/engine/knobs.ts')], bundle: true, platform: 'node', format: 'cjs', outfile, logLevel: 'warning' });
  return createRequire(import.meta.url)(outfile);
}

function specSource(specPath) {
  const text = fs.readFileSync(specPath, 'utf8');
  const m = /^SOURCE\s*=\s*["'](.+?)["']/m.exec(text);
  return path.resolve(path.dirname(specPath), m[1]);
}

function specKernel(specPath) {
  return /^KERNEL\s*=\s*["'](.+?)["']/m.exec(fs.readFileSync(specPath, 'utf8'))[1];
}

async function evaluateOnce(specPath, file, baseline) {
  try {
    const args = [CLI, 'evaluate', '--spec', specPath, '--candidate', file, ...(baseline ? ['--baseline', baseline] : []), '--json'];
    const { stdout } = await exec('node', args, { maxBuffer: 1 << 24 });
    return JSON.parse(stdout.trim().split('\n').pop());
  } catch (e) {
    // exit 1: judged, not ok (the verdict is still on stdout)
    if (e.stdout && e.stdout.trim()) return JSON.parse(e.stdout.trim().split('\n').pop());
    throw new Error((e.stderr || e.message).trim());
  }
}

/**
 * A verdict (against BASELINE instead of the spec's source when given); a harness failure (not the candidate's) is
 * retried once, then counted as a failed point.
 */
async function evaluate(specPath, file, baseline) {
  try {
    return await evaluateOnce(specPath, file, baseline);
  } catch {
    try {
      return await evaluateOnce(specPath, file, baseline);
    } catch (e) {
      process.stderr.write(`\nharness failure on ${file}: ${e.message.split('\n')[0]}\n`);
      return { status: 'harness_error', reason: e.message };
    }
  }
}

/**
 * Per-shape timings of a verdict, keyed by shape, with the shape's paired ratio (candidate and baseline timed side
 * by side in that evaluation) and its interval; undefined unless it is ok.
 */
function timings(v) {
  if (!v || v.status !== 'ok' || !v.shapes?.length) return undefined;
  return v.shapes.map((t) => ({ key: JSON.stringify(t.shape), baseline_ms: t.baseline_ms, candidate_ms: t.candidate_ms, speedup: t.speedup, interval: t.interval }));
}

const fitness = (v) => (v && v.status === 'ok' && Number.isFinite(v.speedup) ? v.speedup : 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function pool(items, n, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  }));
  return results;
}

function cartesian(axes) {
  return axes.reduce((acc, axis) => acc.flatMap((prefix) => axis.values.map((v) => ({ ...prefix, [axis.name]: v }))), [{}]);
}

/** Whether the tuner's best has the grid best's values (same setting: their difference is timing noise alone). */
function tunerValuesOf(runDir, id, gridValues) {
  const meta = JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', `${id}.json`), 'utf8'));
  const v = meta.knobs ?? {};
  return Object.entries(gridValues).every(([k, x]) => v[k] === x);
}

/** The config the tuner's run gets: --config's, with "tuneStarts": false under --no-starts. */
function tunerConfig(opts, work) {
  if (!opts.noStarts) return opts.config;
  const base = opts.config ? JSON.parse(fs.readFileSync(opts.config, 'utf8')) : { hosts: [{ name: 'local', type: 'local' }] };
  const file = path.join(work, 'tuner-config.json');
  fs.writeFileSync(file, JSON.stringify({ ...base, tuneStarts: false }, null, 2));
  return file;
}

const sameValues = (a, b) => Object.entries(a).every(([k, x]) => b?.[k] === x);

/**
 * The settings the tuner's best launches a shape with: its own, or for a per-shape table those of the candidate its
 * row for that shape names (the knobs' text: "{rows=4096, cols=4096}" -> "num_warps=4 (c0001, 1.01x)"; a row that
 * keeps the original's computation names c0000, the kernel as written).
 */
function tunerLaunchOn(runDir, meta, shape) {
  if (meta.mode !== 'dispatch') return meta.knobs;
  const row = meta.knobs?.[`{${Object.entries(shape).map(([k, v]) => `${k}=${v}`).join(', ')}}`];
  const id = typeof row === 'string' ? /\((c\d+),/.exec(row)?.[1] : undefined;
  return id ? JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', `${id}.json`), 'utf8')).knobs : undefined;
}
const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/**
 * The tuner's share of the reachable per-shape gain, from paired ratios alone: T, the tuner's best against the
 * spec's baseline (the median of its evaluations' paired speedups: the re-timings and the final rounds), and, shape
 * by shape, R, that shape's best launch of the sweep judged with the tuner's best as its baseline (--baseline), the
 * two timed side by side in each of PAIRED rounds (the median). The reachable speedup is T x geomean(R), and the
 * share (T - 1) / (T x geomean(R) - 1). Where the tuner launches a shape as its best launch does, R reads 1 within
 * the judge's noise (about 1%) instead of two unpaired figures' difference (one shape read 1.008x in one evaluation
 * and 1.041x in the next); the tuner's table pays its lookup, the shape's best launch none. Also the share with each
 * R taken as at least 1 (every shape's reachable at least what the tuner reached there: the stricter reading).
 */
async function pairedShare(specPath, opts, perShape, tunerC, tunerBestFile) {
  const runs = [...tunerC.runs, ...tunerC.final].filter((run) => run.every((t) => t.speedup > 0));
  if (!opts.paired || !runs.length || !perShape.length || perShape.some((p) => !p.file)) {
    return { rounds: 0, why: !opts.paired ? 'not asked for (--paired 0)' : !runs.length ? 'the tuner\'s best has no ok re-timing' : 'a shape has no ok launch in the sweep' };
  }
  const tuner = median(runs.map((run) => geomean(run.map((t) => t.speedup))));
  // one judgement per distinct best launch and round; each shape reads its own launch's judgement
  const files = [...new Set(perShape.map((p) => p.file))];
  const readings = new Map(files.map((f) => [f, []]));
  for (let r = 0; r < opts.paired; r++) {
    await pool(files, opts.parallel, async (file) => {
      const t = timings(await evaluate(specPath, file, tunerBestFile));
      if (t) readings.get(file).push(t);
    });
  }
  const shapes = perShape.map((p) => {
    const key = JSON.stringify(p.shape);
    const mine = readings.get(p.file).map((run) => run.find((t) => t.key === key)).filter(Boolean);
    if (!mine.length) return undefined;
    const xs = mine.map((t) => t.speedup);
    return { ratio: median(xs), low: Math.min(...xs), high: Math.max(...xs), interval: mine[xs.indexOf(median(xs))].interval, rounds: xs.length };
  });
  if (shapes.some((x) => !x)) return { rounds: opts.paired, tuner, shapes, why: 'a shape\'s best launch was not ok against the tuner\'s best' };
  const ratio = geomean(shapes.map((x) => x.ratio));
  const floor = geomean(shapes.map((x) => Math.max(1, x.ratio)));
  // where the tuner launches a shape as the sweep's best launch does, the two run the same code on it: R differs
  // from 1 by the judge's noise and the table's lookup alone (the same launches read as equal)
  const matched = geomean(shapes.map((x, i) => (perShape[i].sameLaunch ? 1 : x.ratio)));
  const shareOf = (r) => (tuner * r > 1 ? (tuner - 1) / (tuner * r - 1) : null);
  return { rounds: opts.paired, tuner, ratio, reachable: tuner * ratio, share: shareOf(ratio), shareStrict: shareOf(floor), shareMatched: shareOf(matched), shapes };
}

async function benchOne(specPath, opts, knobs, tmp) {
  const name = path.basename(path.dirname(specPath));
  const sourcePath = specSource(specPath);
  const source = fs.readFileSync(sourcePath, 'utf8');
  const all = knobs.detectKnobs(source, sourcePath);
  // the knobs the tuner searches (not a block that must cover a row; those of the launches of the spec's kernel)
  const set = knobs.searchableKnobs(all, specKernel(specPath));
  // an --axis that names no searched knob would leave that knob on its default values: a grid other than the one asked for
  const unknown = Object.keys(opts.axis).filter((n) => !set.knobs.some((k) => k.name === n));
  if (unknown.length) {
    throw new Error(`${name}: --axis ${unknown.join(', ')} names no knob the tuner searches here; its knobs: ${set.knobs.map((k) => k.name).join(', ')}`);
  }
  // sizes take the --grid values; unroll widths, warps and stages (small domains) all of theirs; --axis overrides
  const axes = set.knobs.map((k) => ({
    name: k.name,
    values: opts.axis[k.name] ?? (['unroll', 'warps', 'stages'].includes(k.role) ? k.domain : [...new Set(opts.grid.filter((v) => k.domain.includes(v)))]),
  }));
  const budget = opts.budgetFraction ? Math.max(1, Math.floor(opts.budgetFraction * cartesian(axes).length)) : opts.budget;
  const work = path.join(tmp, name);
  fs.mkdirSync(work, { recursive: true });

  // the tuner, as a user runs it
  const t0 = Date.now();
  const runDir = path.join(work, 'tuner-run');
  let tuner;
  let tunerS;
  // a tuner run that finished under the same --out is kept, like the grid's verdicts: a bench stopped by a time
  // limit goes on where it stopped
  const done = fs.existsSync(path.join(runDir, 'run.json')) && JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'));
  if (done && done.status === 'finished' && done.best) {
    tuner = { best: done.best };
    tunerS = (Date.parse(done.updatedAt) - Date.parse(done.createdAt)) / 1000;
  } else {
    try {
      const args = [CLI, 'evolve', '--spec', specPath, '--operators', 'tune', '--budget', String(budget), '--out', runDir, '--json'];
      const config = tunerConfig(opts, work);
      if (config) args.push('--config', config);
      const { stdout } = await exec('node', args, { maxBuffer: 1 << 24 });
      tuner = JSON.parse(stdout);
    } catch (e) {
      try {
        tuner = JSON.parse(e.stdout);
      } catch {
        throw new Error(`${name}: the tuner's run failed without its JSON: ${String(e.stderr ?? e).trim().split('\n').slice(-3).join(' / ')}`);
      }
    }
    tunerS = (Date.now() - t0) / 1000;
  }
  // a run that judged nothing (a baseline that cannot load, no GPU) has no grid to be compared with: say why
  if (!tuner?.best) throw new Error(`${name}: the tuner's run (${runDir}) ended without a best: ${tuner?.error?.message ?? tuner?.reason ?? 'no JSON from the CLI'}`);
  const verdicts = fs.readFileSync(path.join(runDir, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  // the tuner's evaluations: its candidates judged (the baseline aside); those stopped as moot (speculation.ts) are
  // counted beside them, never as evaluations of the search's budget
  const metas = fs.readdirSync(path.join(runDir, 'candidates')).filter((f) => /^c\d+\.json$/.test(f) && f !== 'c0000.json')
    .map((f) => JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', f), 'utf8')));
  const tunerJudged = metas.filter((m) => m.verdict).length;
  const tunerStopped = metas.filter((m) => m.state === 'cancelled').length;
  const tunerBestFile = path.join(runDir, 'candidates', `${tuner.best.id}${path.extname(sourcePath)}`);

  // the exhaustive grid over the same knobs
  const points = cartesian(axes);
  const g0 = Date.now();
  // grid verdicts are kept in grid.jsonl, so a bench run again with the same --out goes on where it stopped
  const cacheFile = path.join(work, 'grid.jsonl');
  const cached = new Map(fs.existsSync(cacheFile)
    ? fs.readFileSync(cacheFile, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).map((r) => [JSON.stringify(r.values), r])
    : []);
  const gridResults = await pool(points, opts.parallel, async (values, i) => {
    const file = path.join(work, `grid-${i}${path.extname(sourcePath)}`);
    fs.writeFileSync(file, knobs.applyKnobs(source, all, values));
    const hit = cached.get(JSON.stringify(values));
    if (hit && hit.status !== 'harness_error' && (hit.shapes || hit.status !== 'ok')) return { ...hit, file };
    const v = await evaluate(specPath, file);
    process.stderr.write(`\r${name}: grid ${i + 1}/${points.length}`);
    const row = { values, speedup: fitness(v), status: v.status, shapes: timings(v) };
    fs.appendFileSync(cacheFile, JSON.stringify(row) + '\n');
    return { ...row, file };
  });
  process.stderr.write('\n');
  const gridS = (Date.now() - g0) / 1000;

  // Every evaluation times the baseline again; on a busy machine a single baseline timing can be off by several
  // times, so both methods are scored as the engine scores candidates: against the median of every baseline
  // timing of the bench, per shape (the ranking is then by the candidate's own times).
  const reference = new Map();
  const addBaseline = (shapes) => {
    for (const t of shapes ?? []) reference.set(t.key, [...(reference.get(t.key) ?? []), t.baseline_ms]);
  };
  const score = (shapes) => {
    if (!shapes?.length) return 0;
    return Math.exp(shapes.reduce((acc, t) => acc + Math.log(median(reference.get(t.key)) / t.candidate_ms), 0) / shapes.length);
  };
  for (const r of gridResults) addBaseline(r.shapes);
  for (const l of verdicts) addBaseline(timings(l.verdict));
  // the leaders timed again, alternating; each one's candidate times are the medians of its evaluations
  const gridTop = [...gridResults].filter((r) => r.shapes).sort((x, y) => score(y.shapes) - score(x.shapes)).slice(0, opts.top);
  // per shape: each shape's best launch over the grid (by its paired ratio in the grid's evaluation), and what
  // picking it per shape reaches (these first figures are the top of many noisy ones and read high: the share is
  // from paired judgements made after the choice, pairedShare)
  const shapeKeys = gridResults.find((r) => r.shapes)?.shapes.map((t) => t.key) ?? [];
  const perShape = shapeKeys.map((key) => {
    let best = { speedup: 0, values: undefined };
    for (const r of gridResults) {
      const t = r.shapes?.find((x) => x.key === key);
      if (!t) continue;
      // the shape's paired ratio in that evaluation (grid rows kept from before it was recorded: against the reference)
      const s = t.speedup ?? median(reference.get(key)) / t.candidate_ms;
      if (s > best.speedup) best = { speedup: s, values: r.values, file: r.file };
    }
    return { shape: JSON.parse(key), ...best };
  });
  // each shape's best launch is re-timed with the others (its timings on that shape, from the same rounds as the
  // tuner's, are the reachable figure compared with the tuner's re-timed one)
  const perShapeOnly = [...new Map(perShape.filter((p) => p.values && !gridTop.some((g) => sameValues(g.values, p.values)))
    .map((p) => [JSON.stringify(p.values), gridResults.find((r) => r.values === p.values)])).values()];
  const contenders = [...gridTop.map((g) => ({ who: 'grid', file: g.file, values: g.values, first: g.shapes, runs: [] })),
    ...perShapeOnly.map((g) => ({ who: 'shape', file: g.file, values: g.values, first: g.shapes, runs: [] })),
    { who: 'tuner', file: tunerBestFile, first: timings(verdicts.find((l) => l.id === tuner.best.id)?.verdict), runs: [] }];
  // (each round's evaluations run side by side: the harness serializes the timed sections on a device)
  const retime = async (list, rounds, into) => {
    for (let r = 0; r < rounds; r++) {
      await pool(list, opts.parallel, async (c) => {
        const t = timings(await evaluate(specPath, c.file));
        addBaseline(t);
        if (t) c[into].push(t);
      });
    }
  };
  await retime(contenders, opts.repeat, 'runs');
  const medianScore = (runs) => {
    if (!runs.length) return 0;
    const shapes = runs[0].map((t, i) => ({ key: t.key, candidate_ms: median(runs.map((run) => run[i].candidate_ms)) }));
    return score(shapes);
  };
  for (const c of contenders) c.retimed = medianScore(c.runs);
  const shapeRetimed = perShape.map((p) => {
    const c = contenders.find((x) => x.who !== 'tuner' && sameValues(x.values, p.values));
    const ms = c?.runs.map((run) => run.find((t) => t.key === JSON.stringify(p.shape))?.candidate_ms).filter((x) => x !== undefined) ?? [];
    return ms.length ? median(reference.get(JSON.stringify(p.shape))) / median(ms) : p.speedup;
  });
  const reachableRetimed = shapeRetimed.length ? Math.exp(shapeRetimed.reduce((a, x) => a + Math.log(x), 0) / shapeRetimed.length) : 0;
  const gridBest = contenders.filter((c) => c.who === 'grid').reduce((x, y) => (y.retimed > x.retimed ? y : x));
  const tunerC = contenders.find((c) => c.who === 'tuner');
  // The grid's best is the top of several noisy figures, so its own figures read high (the winner's curse); the
  // two are compared on timings taken after the choice, the grid's best and the tuner's best judged side by side
  // FINAL more times (the re-timed figures when --final 0).
  for (const c of [gridBest, tunerC]) c.final = [];
  if (opts.final > 0) await retime([gridBest, tunerC], opts.final, 'final');
  const gridMedian = opts.final > 0 ? medianScore(gridBest.final) : gridBest.retimed;
  const tunerMedian = opts.final > 0 ? medianScore(tunerC.final) : tunerC.retimed;
  const tunerMeta = JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', `${tuner.best.id}.json`), 'utf8'));
  for (const p of perShape) {
    const launch = tunerLaunchOn(runDir, tunerMeta, p.shape);
    p.sameLaunch = !!p.values && !!launch && sameValues(p.values, launch);
  }
  const paired = await pairedShare(specPath, opts, perShape, tunerC, tunerBestFile);
  // evaluations the tuner needed to first reach 90% of the grid's best (both against the same reference)
  const judged = verdicts.filter((l) => l.id !== 'c0000');
  const reach = judged.findIndex((l) => score(timings(l.verdict)) >= 0.9 * gridMedian);
  const reachable = perShape.length ? Math.exp(perShape.reduce((a, p) => a + Math.log(p.speedup), 0) / perShape.length) : 0;
  // a start copied from the answer proves nothing: the kernel as written, and the tuner's drafts, against the grid's best
  const asWritten = Object.fromEntries(set.knobs.map((k) => [k.name, k.value]));
  const drafts = fs.readdirSync(path.join(runDir, 'candidates')).filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', f), 'utf8'))).filter((m) => m.mode === 'draft');
  const startIsAnswer = drafts.filter((m) => sameValues(gridBest.values, m.knobs)).map((m) => m.id);
  return {
    kernel: name,
    knobs: axes.map((a) => `${a.name}∈{${a.values.join(',')}}`).join(' '),
    gridPoints: points.length,
    gridBest: { values: gridBest.values, measured: score(gridBest.first), retimed: gridMedian, seconds: gridS },
    sameSetting: tunerValuesOf(runDir, tuner.best.id, gridBest.values),
    final: opts.final,
    tuner: { id: tuner.best.id, mode: tunerMeta.mode, values: tunerMeta.knobs, measured: score(tunerC.first), retimed: tunerMedian,
      evaluations: tunerJudged, stopped: tunerStopped, seconds: tunerS, reach90: reach < 0 ? null : reach + 1, starts: opts.noStarts ? 'none' : 'knowledge base' },
    fraction: tunerMedian / gridMedian,
    // the share on the re-timed figures of the same rounds (each shape's best launch and the tuner's best)
    perShape: { shapes: perShape.map((p, i) => ({ ...p, file: undefined, retimed: shapeRetimed[i], overTuner: paired.shapes?.[i] })), reachable, reachableRetimed,
      tunerRetimed: tunerC.retimed, shareRetimed: reachableRetimed > 1 ? (tunerC.retimed - 1) / (reachableRetimed - 1) : null, paired },
    asWrittenIsGridBest: sameValues(gridBest.values, asWritten),
    startIsGridBest: startIsAnswer,
  };
}

const opts = parse(process.argv.slice(2));
const tmp = opts.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ke-bench-'));
fs.mkdirSync(tmp, { recursive: true });
const knobs = await loadKnobs(tmp, opts.knobs);
await knobs.KernelLocator.get(); // knob detection finds functions with tree-sitter (the grammars in dist/wasm or node_modules)
const rows = [];
for (const spec of opts.specs) {
  const row = await benchOne(spec, opts, knobs, tmp);
  rows.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
const line = (cells) => `| ${cells.join(' | ')} |`;
const percent = (x) => (x === null || x === undefined ? 'no gain to reach' : `${(100 * x).toFixed(0)}%`);
const shareCell = (p) => `${p.paired.reachable ? `${percent(p.paired.share)}; ${percent(p.paired.shareStrict)}; ${percent(p.paired.shareMatched)}` : '-; -; -'}; ${percent(p.shareRetimed)}`;
const out = [
  `tuner budget ${opts.budgetFraction ? `${opts.budgetFraction} of the grid's points` : opts.budget}; grid ${opts.grid.join(',')} per size knob${Object.keys(opts.axis).length ? ` (${Object.entries(opts.axis).map(([k, v]) => `${k}: ${v.join(',')}`).join('; ')})` : ''}; speedups against the median of all baseline timings of the bench; the grid's top ${opts.top} and the tuner's best re-timed ${opts.repeat}x each (median candidate times)${opts.final ? `, then the grid's best and the tuner's best judged side by side ${opts.final}x more, the second figures and "tuner / grid" from those alone` : ''}; ${os.cpus().length} CPUs; ${new Date().toISOString().slice(0, 10)}`,
  '',
  line(['kernel', 'grid points', 'grid best (first / re-timed)', 'tuner best (first / re-timed)', 'tuner / grid', 'tuner evaluations', 'of the grid\'s', 'evaluations to 90% of grid',
    'best per shape, reachable (first / re-timed / paired)', 'tuner\'s share of the reachable gain (paired; strict; same launches equal; re-timed)', 'tuner s', 'starts']),
  line(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---']),
  ...rows.map((r) => line([r.kernel, r.gridPoints, `${r.gridBest.measured.toFixed(2)}x / ${r.gridBest.retimed.toFixed(2)}x`,
    `${r.tuner.measured.toFixed(2)}x / ${r.tuner.retimed.toFixed(2)}x${r.tuner.mode === 'dispatch' ? ' (per-shape table)' : ''}`, `${(100 * r.fraction).toFixed(1)}%${r.sameSetting ? ' (same setting)' : ''}`,
    `${r.tuner.evaluations}${r.tuner.stopped ? ` (+${r.tuner.stopped} stopped as moot)` : ''}`, `${(100 * r.tuner.evaluations / r.gridPoints).toFixed(0)}%`, r.tuner.reach90 ?? 'not reached',
    `${r.perShape.reachable.toFixed(3)}x / ${r.perShape.reachableRetimed.toFixed(3)}x / ${r.perShape.paired.reachable?.toFixed(3) ?? '-'}x`, shareCell(r.perShape), r.tuner.seconds.toFixed(0),
    `${r.tuner.starts}${r.asWrittenIsGridBest ? '; AS WRITTEN = GRID BEST' : ''}${r.startIsGridBest.length ? `; START ${r.startIsGridBest.join(',')} = GRID BEST` : ''}`])),
  '',
  ...rows.flatMap((r) => [`${r.kernel} per shape (first / re-timed; over the tuner's best, paired: median [lowest-highest of ${r.perShape.paired.rounds}]): ${r.perShape.shapes.map((p) => `${Object.values(p.shape).join('x')} ${p.speedup.toFixed(3)}x / ${p.retimed.toFixed(3)}x at ${JSON.stringify(p.values)}${p.overTuner ? ` (${p.overTuner.ratio.toFixed(3)} [${p.overTuner.low.toFixed(3)}-${p.overTuner.high.toFixed(3)}])` : ''}${p.sameLaunch ? ', the tuner\'s launch' : ''}`).join('; ')}; tuner re-timed ${r.perShape.tunerRetimed.toFixed(3)}x, paired ${r.perShape.paired.tuner?.toFixed(3) ?? '-'}x${r.perShape.paired.why ? ` (no paired share: ${r.perShape.paired.why})` : ''}`]),
];
process.stdout.write(out.join('\n') + '\n');
fs.writeFileSync(path.join(tmp, 'bench-tuner.json'), JSON.stringify(rows, null, 2));
