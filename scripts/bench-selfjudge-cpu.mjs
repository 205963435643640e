// The CPU self-judgement benchmark: four numpy KernelBench problems judged against themselves
// (`kernelevolve suite DIR --self-judge`), and the two C++ candidates of examples/kernelbench/cpu/candidates
// judged against their problems, several runs each, optionally beside busy processes. Prints one table row per
// problem and run: the paired ratio, its interval, KernelBench's eager ratio.
//
//   node scripts/bench-selfjudge-cpu.mjs [--runs N] [--busy K] [--harness DIR] [--self-only]
//
// It ends with how many self-judgements' intervals covered 1.00.
// --harness points at another checkout's harness/ (the judge before a change, say), timed by this CLI.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '2' }, busy: { type: 'string', default: '0' },
  harness: { type: 'string', default: path.join(ROOT, 'harness') }, 'self-only': { type: 'boolean' } } });
const runs = Number(values.runs);
const busy = Number(values.busy);
const CPU = path.join(ROOT, 'examples/kernelbench/cpu');
const PROBLEMS = {
  'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
  'level1/2_softmax_rows.py': path.join(CPU, 'softmax_rows.py'),
  'level1/47_row_sum.py': path.join(ROOT, 'harness/tests/specs/kernelbench/row_sum.py'),
  'level1/89_cumsum.py': path.join(ROOT, 'harness/tests/specs/kernelbench/cumsum_dim_arg.py'),
};
const CANDIDATES = { 'level1/1_relu_scale.py': 'relu_scale.py', 'level1/2_softmax_rows.py': 'softmax_rows.py' };

const dir = mkdtempSync(path.join(tmpdir(), 'ke-selfjudge-'));
for (const [name, from] of Object.entries(PROBLEMS)) {
  mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  copyFileSync(from, path.join(dir, name));
}
const env = { ...process.env, KERNELEVOLVE_HARNESS_DIR: values.harness };
const cli = path.join(ROOT, 'bin/kernelevolve.js');
const spinners = Array.from({ length: busy }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const fmt = (x) => (typeof x === 'number' ? x.toFixed(2) : '-');
let judged = 0;
let covered = 0;
const row = (what, run, v) => {
  if (what.endsWith('against itself')) {
    judged += 1;
    if (v.interval && v.interval[0] <= 1 && v.interval[1] >= 1) covered += 1;
  }
  console.log(`| ${what} | ${run} | ${v.status} | ${fmt(v.speedup)} | ` +
  `${v.interval ? `${fmt(v.interval[0])}-${fmt(v.interval[1])}` : '-'} | ${fmt(v.kernelbench)} |`);
};
try {
  console.log(`harness ${values.harness}; ${busy} busy process(es) beside it\n`);
  console.log('| problem | run | status | ratio | interval | KB eager |\n|---|---|---|---|---|---|');
  for (let run = 1; run <= runs; run++) {
    const out = path.join(dir, `self-${run}`);
    const r = spawnSync(process.execPath, [cli, 'suite', dir, '--self-judge', '--json', '--out', out], { env, encoding: 'utf8' });
    if (!r.stdout) throw new Error(`the suite printed nothing (exit ${r.status}): ${r.stderr.slice(-2000)}`);
    for (const p of JSON.parse(r.stdout).problems) row(`${p.problem} against itself`, run, p);
    for (const [problem, candidate] of Object.entries(values['self-only'] ? {} : CANDIDATES)) {
      const e = spawnSync(process.execPath, [cli, 'evaluate', '--spec', path.join(dir, problem), '--candidate',
        path.join(CPU, 'candidates', candidate), '--json'], { env, encoding: 'utf8' });
      const v = JSON.parse(e.stdout.trim().split('\n').pop());
      row(`${problem} C++ candidate`, run, { status: v.status, speedup: v.speedup, interval: v.speedup_interval,
        kernelbench: v.kernelbench?.speedup });
    }
  }
  console.log(`\nintervals covering 1.00: ${covered} of ${judged} self-judgements`);
} finally {
  for (const s of spinners) s.kill();
  rmSync(dir, { recursive: true, force: true });
}
