// `kernelevolve evolve` on a slurm host of a real one-node Slurm cluster on 127.0.0.1: the same verdicts
// as on the local host, Slurm jobs and nodes in the progress and the run store, Ctrl-C leaving no job, and the
// host config's toolchain reaching the compute nodes.
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlurm, type SlurmCluster } from '../support/slurm';
import { pythonWithNumpy } from '../support/sshd';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'bin', 'kernelevolve.js');
const SPEC = path.join(ROOT, 'examples', 'cpp', 'matmul_blocked', 'spec.py');

let cluster: SlurmCluster;
let dir: string;
let cfg: string;

interface StoredCandidate {
  id: string;
  hash: string;
  verdict?: { status: string };
  placement?: { host: string; jobId?: string; node?: string };
  state?: string;
  cancelled?: string;
}

function candidates(runDir: string): StoredCandidate[] {
  const folder = path.join(runDir, 'candidates');
  return fs.readdirSync(folder).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(folder, f), 'utf8')) as StoredCandidate);
}

async function evolve(host: string, out: string): Promise<{ stdout: string; stderr: string }> {
  return run('node', [CLI, 'evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '6', '--seed', '7', '--host', host,
    '--config', cfg, '--out', out, '--json'], { env: { ...process.env, SLURM_CONF: cluster.conf }, maxBuffer: 1 << 24 })
    .catch((e: { stdout: string; stderr: string }) => e);
}

beforeAll(async () => {
  cluster = await startSlurm();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-slurm-evolve-'));
  cfg = path.join(dir, 'config.json');
  const python = pythonWithNumpy();
  fs.writeFileSync(cfg, JSON.stringify({ hosts: [
    { name: 'local', type: 'local', python },
    { name: 'cluster', type: 'slurm', partition: cluster.partition, maxJobs: 2, workdir: path.join(cluster.dir, 'shared'), python, idleTimeoutS: 30 },
  ] }));
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) await run('node', ['scripts/build.mjs'], { cwd: ROOT });
});

afterAll(async () => {
  await cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('evolve on a slurm host', () => {
  it('judges the same sources as the local host does, and records each one\'s Slurm job and node', async () => {
    const onSlurm = await evolve('cluster', path.join(dir, 'slurm'));
    const onLocal = await evolve('local', path.join(dir, 'local'));
    const slurm = candidates(path.join(dir, 'slurm'));
    const local = candidates(path.join(dir, 'local'));
    expect(slurm.length).toBe(7);
    expect(JSON.parse(onSlurm.stdout.trim().split('\n').pop()!).candidates).toBe(7);
    // Same source, same verdict (timing noise may steer the two searches apart after the first proposals).
    const localStatus = new Map(local.map((c) => [c.hash, c.verdict?.status]));
    const shared = slurm.filter((c) => localStatus.has(c.hash));
    expect(shared.length).toBeGreaterThanOrEqual(2);
    for (const c of shared) expect({ id: c.id, status: c.verdict?.status }).toEqual({ id: c.id, status: localStatus.get(c.hash) });
    // a speculative proposal cancelled before it was sent (its parent turned out slower) ran nowhere
    for (const c of slurm.filter((x) => x.state === 'cancelled')) expect({ placement: c.placement, why: typeof c.cancelled }).toEqual({ placement: undefined, why: 'string' });
    for (const c of slurm.filter((x) => x.state !== 'cancelled')) {
      expect(c.placement).toMatchObject({ host: 'cluster', node: cluster.node });
      expect(c.placement?.jobId).toMatch(/^\d+$/);
    }
    expect(onSlurm.stderr).toMatch(/Slurm job \d+ submitted/);
    expect(onSlurm.stderr).toMatch(/started on Slurm job \d+ \(node /);
    expect(onLocal.stderr).not.toMatch(/Slurm job/);
    expect(cluster.squeue()).toEqual([]);
  });

  it('Ctrl-C stops the run and leaves no job in squeue', async () => {
    const child = spawn('node', [CLI, 'evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '40', '--host', 'cluster',
      '--config', cfg, '--out', path.join(dir, 'stopped')], { env: { ...process.env, SLURM_CONF: cluster.conf }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (/started on Slurm job/.test(stderr)) resolve();
      });
      void exited.then(() => reject(new Error(`evolve ended before a candidate started:\n${stderr}`)));
    });
    expect(cluster.squeue().length).toBeGreaterThan(0);
    child.kill('SIGINT');
    const code = await exited;
    expect(code).not.toBeNull();
    expect(stderr).toMatch(/scancelled Slurm job\(s\) \d+/);
    expect(cluster.squeue()).toEqual([]);
  });
  it('gives the compute nodes the toolchain a custom spec leaves to the host config', async () => {
    // the simacc example without its TOOLCHAIN: only the Slurm host's "toolchain" can build and run it
    const example = path.join(ROOT, 'examples', 'custom', 'simacc_matmul');
    const simacc = path.join(ROOT, 'harness', 'tests', 'simacc');
    const text = fs.readFileSync(path.join(example, 'spec.py'), 'utf8');
    const start = text.indexOf('TOOLCHAIN = {');
    const bare = path.join(dir, 'bare-custom-spec.py');
    fs.writeFileSync(bare, (text.slice(0, start) + text.slice(text.indexOf('}\n', start) + 2))
      .replace('SOURCE = "matmul.cpp"', `SOURCE = ${JSON.stringify(path.join(example, 'matmul.cpp'))}`));
    const config = path.join(dir, 'custom-config.json');
    fs.writeFileSync(config, JSON.stringify({ hosts: [{ ...JSON.parse(fs.readFileSync(cfg, 'utf8')).hosts[1],
      toolchain: { compile: [path.join(simacc, 'simacc-cc'), '{source}', '-o', '{output}'], run: [path.join(simacc, 'simacc-run'), '--'] } }] }));
    const r = await run('node', [CLI, 'evaluate', '--spec', bare, '--candidate', path.join(example, 'candidates', 'scratchpad_tiles.cpp'),
      '--host', 'cluster', '--config', config, '--json'], { env: { ...process.env, SLURM_CONF: cluster.conf }, maxBuffer: 1 << 24 })
      .catch((e: { stdout: string; stderr: string }) => e);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!), r.stderr).toMatchObject({ status: 'ok', compile: { compiler: 'simacc-cc' } });
    expect(r.stderr).toMatch(/started on Slurm job \d+ \(node /);
    expect(cluster.squeue()).toEqual([]);
  });
});
