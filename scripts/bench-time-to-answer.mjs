// `node scripts/bench-time-to-answer.mjs`: the time from Evolve to a tuned answer, side by side for two builds of
// the CLI, on real kernels with the real harness: `kernelevolve evolve --operators tune --budget B` on one local
// host of S slots, the two builds alternating, R runs each. For each run: the wall seconds from the command's
// start to its JSON, the search's seconds (to the last candidate's verdict) and the confirmation's (after it), the
// confirmation's rounds (its "Judging ..." lines), the candidates judged before the baseline's verdict was in,
// and the best with its figure.
//
// usage: node scripts/bench-time-to-answer.mjs --before DIR [--after DIR] [--budget 12] [--slots 4] [--repeat 3]
//                                              [SPEC.py ...]
// DIR is a checkout with its own build (node scripts/build.mjs there); --after defaults to this checkout.
// Default spec: examples/cpp/softmax_rows/spec.py.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function parse(argv) {
  const o = { before: undefined, after: ROOT, budget: 12, slots: 4, repeat: 3, specs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--before') o.before = path.resolve(argv[++i]);
    else if (a === '--after') o.after = path.resolve(argv[++i]);
    else if (a === '--budget') o.budget = Number(argv[++i]);
    else if (a === '--slots') o.slots = Number(argv[++i]);
    else if (a === '--repeat') o.repeat = Number(argv[++i]);
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else o.specs.push(path.resolve(a));
  }
  if (!o.before) throw new Error('--before DIR is required: a checkout of the build to compare with, built (node scripts/build.mjs)');
  if (!o.specs.length) o.specs.push(path.join(ROOT, 'examples/cpp/softmax_rows/spec.py'));
  for (const dir of [o.before, o.after]) {
    if (!fs.existsSync(path.join(dir, 'dist', 'cli.js'))) throw new Error(`${dir}/dist/cli.js is missing: run node scripts/build.mjs in ${dir}`);
  }
  return o;
}

async function evolve(build, spec, o, work) {
  const out = fs.mkdtempSync(path.join(work, 'run-'));
  const config = path.join(work, 'hosts.json');
  const t0 = Date.now();
  const { stdout } = await exec(process.execPath, [path.join(build, 'bin', 'kernelevolve.js'), 'evolve', '--spec', spec, '--operators', 'tune',
    '--budget', String(o.budget), '--config', config, '--out', out, '--json'], { maxBuffer: 64 << 20 });
  const wallS = (Date.now() - t0) / 1000;
  const summary = JSON.parse(stdout.trim().split('\n').pop());
  const metas = fs.readdirSync(path.join(out, 'candidates')).filter((f) => /^c\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(out, 'candidates', f), 'utf8')));
  const base = metas.find((m) => m.id === 'c0000');
  const started = Math.min(...metas.map((m) => m.timings.proposedAt));
  const finished = metas.map((m) => m.timings.finishedAt).filter(Boolean);
  const searchEnd = Math.max(...finished);
  const logs = fs.existsSync(path.join(out, 'log.jsonl'))
    ? fs.readFileSync(path.join(out, 'log.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  const beside = metas.filter((m) => m.id !== 'c0000' && m.timings.startedAt && m.timings.startedAt < base.timings.finishedAt).length;
  return {
    wallS,
    searchS: (searchEnd - started) / 1000,
    confirmS: wallS - (searchEnd - started) / 1000,
    rounds: logs.filter((l) => l.message?.startsWith('Judging')).length,
    beside,
    judged: metas.filter((m) => m.state === 'done' && m.id !== 'c0000').length,
    best: summary.best ? `${summary.best.id} ${summary.best.speedup.toFixed(2)}x` : 'none',
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const o = parse(process.argv.slice(2));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-tta-'));
  fs.writeFileSync(path.join(work, 'hosts.json'), JSON.stringify({ hosts: [{ name: 'local', type: 'local', slots: o.slots }] }));
  console.log(`evolve --operators tune --budget ${o.budget}, one local host of ${o.slots} slots, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
  console.log(`before: ${o.before}\nafter:  ${o.after}`);
  for (const spec of o.specs) {
    const rows = { before: [], after: [] };
    for (let r = 0; r < o.repeat; r++) {
      for (const which of r % 2 ? ['after', 'before'] : ['before', 'after']) {
        const row = await evolve(o[which], spec, o, work);
        rows[which].push(row);
        console.log(`${path.relative(ROOT, spec)} ${which.padEnd(6)} run ${r + 1}: wall ${row.wallS.toFixed(1)} s (search ${row.searchS.toFixed(1)}, confirmation ${row.confirmS.toFixed(1)}, ${row.rounds} round(s)); ${row.judged} judged, ${row.beside} beside the baseline; best ${row.best}`);
      }
    }
    const m = (which, k) => median(rows[which].map((x) => x[k]));
    console.log(`| ${path.relative(ROOT, spec)} | wall s | search s | confirmation s | rounds | judged beside the baseline |`);
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const which of ['before', 'after']) {
      console.log(`| ${which} (median of ${o.repeat}) | ${m(which, 'wallS').toFixed(1)} | ${m(which, 'searchS').toFixed(1)} | ${m(which, 'confirmS').toFixed(1)} | ${m(which, 'rounds')} | ${m(which, 'beside')} |`);
    }
    console.log(`after / before, wall: ${(m('after', 'wallS') / m('before', 'wallS')).toFixed(2)}`);
  }
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
