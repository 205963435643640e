#!/usr/bin/env node
// How long a candidate waits between being ready (the engine hands it to the Slurm host) and starting on a
// worker (the worker launches the harness on it). Three cases:
//   cold   the run's first candidate: sbatch, the scheduler starting the job, the worker starting up;
//   warm   one candidate at a time with idle workers waiting: the queue folder's hand-over alone;
//   burst  maxJobs candidates at once with idle workers waiting.
// By default it starts the one-node Slurm cluster of the tests on 127.0.0.1; with --config/--host it
// measures a real cluster (run it on the login node, or give the host an ssh "host").
//
//   node scripts/bench-slurm.mjs [--n 20] [--cold 3] [--config FILE --host NAME] [--spec S --candidate C]
import { build } from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20' },
    cold: { type: 'string', default: '3' },
    config: { type: 'string' },
    host: { type: 'string' },
    spec: { type: 'string', default: path.join(root, 'examples/cpp/softmax_rows/spec.py') },
    candidate: { type: 'string', default: path.join(root, 'examples/cpp/softmax_rows/candidates/vec16.cpp') },
    json: { type: 'boolean', default: false },
  },
});

// The host and the test cluster are TypeScript: bundle them once for this process.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-bench-slurm-'));
const entry = path.join(tmp, 'entry.ts');
fs.writeFileSync(entry, [
  `export { SlurmHost } from ${JSON.stringify(path.join(root, 'src/remote/slurmHost'))};`,
  `export { startSlurm } from ${JSON.stringify(path.join(root, 'test/support/slurm'))};`,
  `export { pythonWithNumpy } from ${JSON.stringify(path.join(root, 'test/support/sshd'))};`,
  `export { loadConfig } from ${JSON.stringify(path.join(root, 'src/remote/hostConfig'))};`,
  `export { slurmHostFor } from ${JSON.stringify(path.join(root, 'src/remote/slurmHostFactory'))};`,
  `export { loadSpec } from ${JSON.stringify(path.join(root, 'src/engine/spec'))};`,
].join('\n'));
let lib;
try {
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: path.join(tmp, 'bench.cjs'), logLevel: 'error',
    external: ['cpu-features', './crypto/build/Release/sshcrypto.node'] });
  lib = createRequire(import.meta.url)(path.join(tmp, 'bench.cjs'));
} catch (e) {
  fs.rmSync(tmp, { recursive: true, force: true });
  throw e;
}
process.env.KERNELEVOLVE_HARNESS_DIR ??= path.join(root, 'harness');

const n = Number(values.n);
const coldRuns = Number(values.cold);
const spec = await lib.loadSpec(values.spec);
const candidate = fs.readFileSync(values.candidate, 'utf8');

let cluster;
let makeHost;
let where;
if (values.config) {
  const config = await lib.loadConfig(values.config);
  const hc = config.hosts.find((h) => h.name === values.host && h.type === 'slurm');
  if (!hc) throw new Error(`--host must name a slurm host of ${values.config}.`);
  makeHost = () => lib.slurmHostFor(hc);
  where = `${hc.name} (partition ${hc.partition ?? 'default'})`;
} else {
  cluster = await lib.startSlurm();
  process.env.SLURM_CONF = cluster.conf;
  const python = lib.pythonWithNumpy();
  makeHost = () => new lib.SlurmHost({ name: 'bench', type: 'slurm', partition: cluster.partition, maxJobs: 2,
    workdir: path.join(cluster.dir, 'shared'), python, idleTimeoutS: 120 });
  where = `one-node test cluster on 127.0.0.1 (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'cpu'})`;
}

let seq = 0;
const job = () => ({ id: `b${++seq}`, specPath: spec.specPath, baselinePath: spec.sourcePath,
  candidateSource: `${candidate}\n// bench ${seq}\n`, candidateFileName: path.basename(values.candidate), timeoutS: 600 });

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0], max: s[s.length - 1] };
}

const results = {};
try {
  // cold: a fresh host per sample, so each one pays sbatch, scheduling and the worker's start.
  const cold = [];
  for (let i = 0; i < coldRuns; i++) {
    const host = makeHost();
    try {
      cold.push((await host.evaluate(job())).queue_wait_ms);
    } finally {
      await host.dispose();
    }
  }
  results.cold = stats(cold);

  const host = makeHost();
  try {
    // Fill the pool (maxJobs workers running and idle), then measure.
    await Promise.all(Array.from({ length: host.slots }, () => host.evaluate(job())));
    const warm = [];
    const evalMs = [];
    for (let i = 0; i < n; i++) {
      const v = await host.evaluate(job());
      warm.push(v.queue_wait_ms);
      evalMs.push(v.wall_ms - v.queue_wait_ms);
    }
    results.warm = stats(warm);
    results.evaluation = stats(evalMs);
    const burst = [];
    for (let i = 0; i < Math.max(1, Math.floor(n / host.slots)); i++) {
      const vs = await Promise.all(Array.from({ length: host.slots }, () => host.evaluate(job())));
      burst.push(...vs.map((v) => v.queue_wait_ms));
    }
    results.burst = stats(burst);
    results.workerJobs = host.workerJobs.length;
    results.slots = host.slots;
  } finally {
    await host.dispose();
  }
} finally {
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}

if (values.json) {
  process.stdout.write(JSON.stringify({ where, spec: values.spec, candidate: values.candidate, ...results }) + '\n');
} else {
  const row = (name, s) => `| ${name} | ${s.n} | ${s.median} | ${s.p90} | ${s.min} | ${s.max} |`;
  process.stdout.write([
    `Slurm host: ready -> started on a worker, ms (${where}; ${path.relative(root, values.candidate)})`,
    '',
    '| case | samples | median | p90 | min | max |',
    '|---|---|---|---|---|---|',
    row('cold (first candidate of a run: sbatch + scheduling + worker start)', results.cold),
    row(`warm (one at a time, ${results.slots} idle workers)`, results.warm),
    row(`burst (${results.slots} at once, ${results.slots} idle workers)`, results.burst),
    row('for scale: the evaluation itself (harness start to verdict)', results.evaluation),
    '',
    `worker jobs started for the warm and burst runs: ${results.workerJobs}`,
    '',
  ].join('\n'));
}
