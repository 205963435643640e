#!/usr/bin/env node
// Is the reported best the side-by-side ratio? On this machine, loaded (two slots judging at once, plus one
// background process that spins), the same CPU spec is evolved several times with the tuner; for each run it
// prints the run's reported best (with its interval) and the harness's own side-by-side ratio for the same
// winner, measured again afterwards. What must hold: the reported bests within 10% of each other, and each
// within 10% of its side-by-side ratios.
//
//   node scripts/bench-paired.mjs [--runs 3] [--budget 30] [--spec S] [--retime 2] [--no-load] [--json]
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    budget: { type: 'string', default: '30' },
    retime: { type: 'string', default: '2' },
    spec: { type: 'string', default: path.join(root, 'examples/cpp/matmul_blocked/spec.py') },
    'no-load': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const cli = path.join(root, 'bin/kernelevolve.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-bench-paired-'));
const config = path.join(tmp, 'config.json');
fs.writeFileSync(config, JSON.stringify({ hosts: [{ name: 'local', type: 'local', slots: 2 }] }));
const log = (s) => process.stderr.write(s + '\n');

function kernelevolve(args) {
  const r = spawnSync(process.execPath, [cli, ...args, '--config', config, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`kernelevolve ${args[0]} exited ${r.status}: ${r.stderr.split('\n').slice(-5).join('\n')}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// One process that spins on a core for the whole benchmark: the load the figures must stand up to.
const load = values['no-load'] ? undefined : spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
const results = [];
try {
  for (let i = 0; i < Number(values.runs); i++) {
    const out = path.join(tmp, `run${i + 1}`);
    const t = Date.now();
    const run = kernelevolve(['evolve', '--spec', values.spec, '--operators', 'tune', '--budget', values.budget, '--out', out]);
    const best = run.best;
    const row = { run: i + 1, wallS: (Date.now() - t) / 1000, best: best?.id, operator: best?.operator, reported: best?.speedup, interval: best?.interval, confirmed: !!best?.confirmed, sideBySide: [] };
    if (best && best.id !== 'c0000') {
      const file = fs.readdirSync(path.join(run.runDir, 'candidates')).find((f) => f.startsWith(`${best.id}.`) && !f.endsWith('.json'));
      for (let k = 0; k < Number(values.retime); k++) {
        const v = kernelevolve(['evaluate', '--spec', values.spec, '--candidate', path.join(run.runDir, 'candidates', file)]);
        row.sideBySide.push({ speedup: v.speedup, interval: v.speedup_interval });
      }
    }
    results.push(row);
    log(`run ${row.run}: best ${row.best} reported ${fmt(row.reported, row.interval)}${row.confirmed ? ' confirmed' : ''}; side by side ${row.sideBySide.map((s) => fmt(s.speedup, s.interval)).join(', ')} (${row.wallS.toFixed(0)} s)`);
  }
} finally {
  load?.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
}

function fmt(x, iv) {
  if (typeof x !== 'number') return '-';
  return iv ? `${x.toFixed(2)}x (${iv[0].toFixed(2)}-${iv[1].toFixed(2)})` : `${x.toFixed(2)}x`;
}

const reported = results.map((r) => r.reported).filter((x) => typeof x === 'number');
const spread = reported.length ? Math.max(...reported) / Math.min(...reported) : NaN;
const worstPair = Math.max(...results.flatMap((r) => r.sideBySide.map((s) => Math.max(r.reported / s.speedup, s.speedup / r.reported))));
const summary = {
  date: new Date().toISOString(), cpus: os.cpus().length, load: !values['no-load'], budget: Number(values.budget), spec: path.relative(root, values.spec),
  runs: results, reportedSpread: spread, worstReportedVsSideBySide: worstPair,
  pass: spread <= 1.10 && worstPair <= 1.10,
};
if (values.json) process.stdout.write(JSON.stringify(summary) + '\n');
else {
  const lines = [' run  best    reported              side by side (same winner, measured again)', ...results.map((r) =>
    `${String(r.run).padStart(4)}  ${(r.best ?? '-').padEnd(6)}  ${fmt(r.reported, r.interval).padEnd(20)}  ${r.sideBySide.map((s) => fmt(s.speedup, s.interval)).join('  ')}`),
  `reported bests: max/min ${spread.toFixed(3)}; worst reported vs side by side ${worstPair.toFixed(3)} (goal: both <= 1.10): ${summary.pass ? 'met' : 'NOT met'}`];
  process.stdout.write(lines.join('\n') + '\n');
}
