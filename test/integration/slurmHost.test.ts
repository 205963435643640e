// The Slurm host against a real one-node Slurm cluster on 127.0.0.1 (slurmctld, slurmd, munged started
// here), with the real harness judging real C++ candidates inside the worker jobs.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/contract/verdict';
import type { EvaluationJob, Placement } from '../../src/contract/job';
import { HostUnavailableError } from '../../src/remote/host';
import type { SlurmHostConfig } from '../../src/remote/hostConfig';
import { LocalHost } from '../../src/remote/localHost';
import { SlurmHost } from '../../src/remote/slurmHost';
import { startSlurm, type SlurmCluster } from '../support/slurm';
import { pythonWithNumpy } from '../support/sshd';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'bin', 'kernelevolve.js');

const KERNEL = `// y[i] = a * x[i] + y[i]
extern "C" void saxpy(const float* x, float* y, float a, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
`;
const SPEC = `import ctypes
import numpy as np

BACKEND = "cpp"
SOURCE = "kernel.cpp"
KERNEL = "saxpy"
SHAPES = [{"n": 4096}, {"n": 10007}]
INPLACE = [1]


def inputs(shape, seed):
    rng = np.random.default_rng(seed)
    n = shape["n"]
    return (rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32), 1.5, n)


def launch(k, x, y, a, n):
    k.saxpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_int]
    k.saxpy(x.ctypes.data, y.ctypes.data, a, n)
    return y
`;
const CANDIDATES: Record<string, string> = {
  'same.cpp': KERNEL.replace('// y[i]', '// the baseline, restated: y[i]'),
  'wrong.cpp': KERNEL.replace('a * x[i] + y[i];', 'a * x[i] - y[i];'),
  'broken.cpp': KERNEL.replace('for (int i', 'for (int i = 0; syntax error; ++i) for (int j'),
};

let cluster: SlurmCluster;
let fixture: string;
let python: string;

function config(extra: Partial<SlurmHostConfig> = {}): SlurmHostConfig {
  return { name: 'cluster', type: 'slurm', partition: cluster.partition, workdir: path.join(cluster.dir, 'shared'),
    maxJobs: 2, idleTimeoutS: 60, python, ...extra };
}

function job(id: string, file: string, source = CANDIDATES[file]): EvaluationJob {
  return { id, specPath: path.join(fixture, 'spec.py'), baselinePath: path.join(fixture, 'kernel.cpp'),
    candidateSource: source, candidateFileName: file, timeoutS: 120 };
}

/** What must agree between two hosts: the status and the reason, less seeds, timings and scratch paths. */
function gist(v: Verdict): { status: string; reason: string } {
  return { status: v.status, reason: v.reason.replace(/\/\S+\//g, '').replace(/-?\d+(\.\d+)?(e-?\d+)?/g, 'N') };
}

/** Processes still alive that a job of this cluster started (an orphaned candidate would escape Slurm's tracking). */
function leftovers(jobIds: string[]): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const env = fs.readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`SLURM_CONF=${cluster.conf}`) && jobIds.some((id) => env.includes(`SLURM_JOB_ID=${id}`))) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function ourJobs(host: SlurmHost): string[] {
  return cluster.squeue().filter((l) => l.endsWith(`|${host.jobName}`));
}

beforeAll(async () => {
  python = pythonWithNumpy();
  cluster = await startSlurm();
  process.env.SLURM_CONF = cluster.conf;
  fixture = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-slurm-spec-'));
  fs.writeFileSync(path.join(fixture, 'kernel.cpp'), KERNEL);
  fs.writeFileSync(path.join(fixture, 'spec.py'), SPEC);
  for (const [name, text] of Object.entries(CANDIDATES)) fs.writeFileSync(path.join(fixture, name), text);
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) await run('node', ['scripts/build.mjs'], { cwd: ROOT });
});

afterAll(async () => {
  await cluster?.stop();
  delete process.env.SLURM_CONF;
  if (fixture) fs.rmSync(fixture, { recursive: true, force: true });
});

describe('slurm host', () => {
  it('judges candidates on long-lived worker jobs with the verdicts the local host gives', async () => {
    const local = new LocalHost({ python });
    const host = new SlurmHost(config());
    const news: string[] = [];
    host.onLog((_level, m) => news.push(m));
    try {
      const files = Object.keys(CANDIDATES);
      const [onSlurm, onLocal] = await Promise.all([
        Promise.all(files.map((f) => host.evaluate(job(f, f)))),
        Promise.all(files.map((f) => local.evaluate(job(f, f)))),
      ]);
      expect(onSlurm.map((v) => v.status)).toEqual(['ok', 'incorrect', 'compile_error']);
      expect(onSlurm.map(gist)).toEqual(onLocal.map(gist));
      for (const v of onSlurm as (Verdict & { placement: Placement })[]) {
        expect(v.placement).toMatchObject({ host: 'cluster', node: cluster.node });
        expect(v.placement.jobId).toMatch(/^\d+$/);
        expect(typeof v.queue_wait_ms).toBe('number');
      }
      // Three candidates, at most maxJobs worker jobs: no job per candidate.
      expect(host.workerJobs.length).toBeLessThanOrEqual(2);
      expect(news.some((m) => /started on Slurm job \d+ \(node /.test(m))).toBe(true);
      expect(ourJobs(host).length).toBeGreaterThan(0); // the workers wait for more work until released
    } finally {
      await host.dispose();
    }
    expect(ourJobs(host)).toEqual([]);
  });

  it('gives the examples\' candidates the verdicts the local host gives', async () => {
    const examples = path.join(ROOT, 'examples', 'cpp');
    const jobs: EvaluationJob[] = [];
    for (const example of fs.readdirSync(examples).sort()) {
      const specPath = path.join(examples, example, 'spec.py');
      const spec = fs.readFileSync(specPath, 'utf8');
      const source = /^SOURCE\s*=\s*["'](.+?)["']/m.exec(spec)![1];
      for (const file of fs.readdirSync(path.join(examples, example, 'candidates')).sort()) {
        jobs.push({ id: `${example}-${file}`, specPath, baselinePath: path.join(examples, example, source), candidateFileName: file,
          candidateSource: fs.readFileSync(path.join(examples, example, 'candidates', file), 'utf8'), timeoutS: 300 });
      }
    }
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    const host = new SlurmHost(config());
    try {
      const onSlurm = await Promise.all(jobs.map((j) => host.evaluate(j)));
      const local = new LocalHost({ python });
      const onLocal: Verdict[] = [];
      for (const j of jobs) onLocal.push(await local.evaluate(j));
      expect(onSlurm.map(gist)).toEqual(onLocal.map(gist));
      expect(onSlurm.every((v) => v.placement?.node === cluster.node)).toBe(true);
    } finally {
      await host.dispose();
    }
  });

  it('loses no candidate when a worker job is scancelled from outside mid-run', async () => {
    const host = new SlurmHost(config());
    const news: string[] = [];
    let victim: string | undefined;
    host.onLog((_level, m) => {
      news.push(m);
      const started = /started on Slurm job (\d+)/.exec(m);
      if (started && !victim) {
        victim = started[1];
        cluster.run('scancel', [victim]);
      }
    });
    try {
      const jobs = Array.from({ length: 6 }, (_, i) => job(`c${i}`, 'same.cpp', `${CANDIDATES['same.cpp']}// variant ${i}\n`));
      const verdicts = await Promise.all(jobs.map((j) => host.evaluate(j)));
      expect(victim).toBeDefined();
      expect(verdicts.map((v) => v.status)).toEqual(Array(6).fill('ok'));
      // The candidate the cancelled job was judging went back to the queue and was judged again elsewhere.
      const retried = verdicts.filter((v) => (v.attempts as number) >= 2);
      expect(retried.length).toBeGreaterThanOrEqual(1);
      for (const v of retried) expect(v.placement?.jobId).not.toBe(victim);
      expect(news.some((m) => new RegExp(`Slurm job ${victim}.* ended`).test(m))).toBe(true);
      // A replacement worker was started for the lost one.
      expect(host.workerJobs.length).toBeGreaterThanOrEqual(3);
    } finally {
      await host.dispose();
    }
    expect(ourJobs(host)).toEqual([]);
    expect(leftovers(host.workerJobs.map((j) => j.jobId))).toEqual([]);
  });

  // A node that dies takes its worker with it (no SIGTERM, no goodbye); one that hangs stops its heartbeat.
  for (const [how, signal, options] of [
    ['killed outright, as when its node dies', 'SIGKILL', {}],
    ['hung (no heartbeat)', 'SIGSTOP', { staleS: 3 }],
  ] as const) {
    it(`requeues the candidate of a worker ${how}`, async () => {
      const host = new SlurmHost(config({ maxJobs: 1 }), options);
      const queueDir = await host.queueDir();
      const news: string[] = [];
      let victim: string | undefined;
      let victimPid = 0;
      host.onLog((_level, m) => {
        news.push(m);
        const started = /started on Slurm job (\d+)/.exec(m);
        if (started && !victim) {
          victim = started[1];
          victimPid = (JSON.parse(fs.readFileSync(path.join(queueDir, 'workers', `${victim}.json`), 'utf8')) as { pid: number }).pid;
          process.kill(victimPid, signal);
        }
      });
      try {
        const verdicts = await Promise.all([0, 1].map((i) => host.evaluate(job(`k${i}`, 'same.cpp', `${KERNEL}// k${i}\n`))));
        expect(verdicts.map((v) => v.status)).toEqual(['ok', 'ok']);
        expect(verdicts.some((v) => (v.attempts as number) >= 2 && v.placement?.jobId !== victim)).toBe(true);
        expect(news.some((m) => new RegExp(`Slurm job ${victim} .*(ended|no heartbeat)`).test(m))).toBe(true);
      } finally {
        await host.dispose();
      }
      expect(ourJobs(host)).toEqual([]);
      // the judge folder the lost worker had on the node is removed by the worker started after it
      if (signal === 'SIGKILL') expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`kernelevolve-judge-${victimPid}@${os.hostname()}-`))).toEqual([]);
    });
  }

  it('times an evaluation from its start on the worker and stops it at the job\'s limit', async () => {
    const host = new SlurmHost(config({ maxJobs: 1 }));
    try {
      const spin = KERNEL.replace('for (int i = 0; i < n; ++i)', 'for (volatile int s = 1; s; ) {} for (int i = 0; i < n; ++i)');
      const v = await host.evaluate({ ...job('spin', 'spin.cpp', spin), timeoutS: 8 });
      expect(v.status).toBe('timeout');
      // The wait for the worker job to start is not part of the limit.
      expect(v.wall_ms! - (v.queue_wait_ms as number)).toBeGreaterThanOrEqual(7_000);
    } finally {
      await host.dispose();
    }
    expect(ourJobs(host)).toEqual([]);
    expect(leftovers(host.workerJobs.map((j) => j.jobId))).toEqual([]);
  });

  it('stopping the run scancels every worker job and refuses the candidates still waiting', async () => {
    const host = new SlurmHost(config());
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    host.onLog((_l, m) => {
      if (/started on Slurm job/.test(m)) running();
    });
    const pending = Array.from({ length: 4 }, (_, i) => host.evaluate(job(`s${i}`, 'same.cpp', `${KERNEL}// s${i}\n`)).then(
      () => 'judged', (e: Error) => (e instanceof HostUnavailableError ? 'refused' : `other: ${e.message}`)));
    await started;
    expect(ourJobs(host).length).toBeGreaterThan(0);
    await host.dispose();
    expect(ourJobs(host)).toEqual([]);
    const outcomes = await Promise.all(pending);
    expect(outcomes).toContain('refused');
    expect(outcomes.every((o) => o === 'judged' || o === 'refused')).toBe(true);
  });

  it('the CLI evaluates through a slurm host from the config and prints the same verdict as locally', async () => {
    const cfg = path.join(fixture, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ hosts: [{ name: 'local', type: 'local', python }, { ...config(), idleTimeoutS: 5 }] }));
    const spec = path.join(fixture, 'spec.py');
    const evalOn = async (host: string) => {
      const r = await run('node', [CLI, 'evaluate', '--spec', spec, '--candidate', path.join(fixture, 'wrong.cpp'), '--host', host, '--config', cfg, '--json'],
        { env: { ...process.env, SLURM_CONF: cluster.conf } }).catch((e: { stdout: string; stderr: string; code: number }) => e);
      return { code: (r as { code?: number }).code ?? 0, stderr: r.stderr, verdict: JSON.parse(r.stdout.trim().split('\n').pop()!) as Verdict };
    };
    const [slurm, local] = [await evalOn('cluster'), await evalOn('local')];
    expect(slurm.code).toBe(1);
    expect(gist(slurm.verdict)).toEqual(gist(local.verdict));
    expect(slurm.verdict.placement).toMatchObject({ host: 'cluster', node: cluster.node });
    expect(slurm.stderr).toMatch(/started on Slurm job \d+ \(node /);
    expect(slurm.stderr).toMatch(/scancelled Slurm job\(s\) \d+/);
    expect(cluster.squeue()).toEqual([]); // the CLI disposed its host: nothing left behind
    const check = await run('node', [CLI, 'hosts', '--check', '--host', 'cluster', '--config', cfg], { env: { ...process.env, SLURM_CONF: cluster.conf } });
    expect(check.stdout).toMatch(new RegExp(`cluster: .*partition=${cluster.partition} \\(up\\).*nodes=1: ${cluster.node}.*gpus=none.*limits=unknown`));
  });

  it('reports the partition, its nodes and GPUs, and the account limits for hosts --check', async () => {
    const host = new SlurmHost(config());
    const check = await host.check();
    expect(check.reachable).toBe(true);
    expect(check.facts).toMatchObject({ partition: `${cluster.partition} (up)`, gpus: 'none', cpus: String(os.cpus().length) });
    expect(check.facts.nodes).toContain(cluster.node);
    // This cluster keeps no accounting database, so the limits are unknown, and say why.
    expect(check.facts.limits).toMatch(/^unknown \(.+\)/);
    const missing = await new SlurmHost(config({ partition: 'no-such-partition' })).check();
    expect(missing.reachable).toBe(false);
    expect(missing.error).toMatch(/no partition "no-such-partition"/);
  });

  it('runs the harness\'s own check inside a job on a compute node for hosts --check', async () => {
    const check = await new SlurmHost(config()).check();
    expect(check.error).toBeUndefined();
    // What the candidates will find on the node, from the same check the local and SSH hosts run.
    expect(check.facts).toMatchObject({ host: cluster.node, gpu: 'none', torch: expect.any(String), triton: expect.any(String) });
    expect(check.facts.python).toMatch(/^3\.\d+\.\d+$/);
    expect(check.facts.numpy).toMatch(/^\d+\./);
    expect(check.facts['g++']).toMatch(/g\+\+/);
    expect(check.facts.partition).toBe(`${cluster.partition} (up)`);
  });

  it('says what to fix when sbatch refuses the worker job', async () => {
    const host = new SlurmHost(config({ partition: 'no-such-partition' }));
    try {
      const err = await host.evaluate(job('x', 'same.cpp')).then(() => undefined, (e: Error) => e);
      expect(err).toBeInstanceOf(HostUnavailableError);
      expect(err!.message).toMatch(/sbatch refused the worker job.*[Ii]nvalid partition.*Check "partition"/s);
    } finally {
      await host.dispose();
    }
  });
});
