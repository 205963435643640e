// A real one-node Slurm cluster on 127.0.0.1 for tests: Debian's slurm-wlm and munge with a key, socket,
// config, state and ports of their own in a temp folder, stopped by the pids in their pid files. The
// machine's own /etc/munge and /etc/slurm are left alone; clients find this cluster through SLURM_CONF.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
// @ts-expect-error plain .mjs helper shared with the command line
import { aptGetInstall } from '../../scripts/test-prerequisites.mjs';
import { freePort } from './sshd';

export interface SlurmCluster {
  dir: string;
  /** The slurm.conf every client must see (exported as SLURM_CONF). */
  conf: string;
  env: NodeJS.ProcessEnv;
  partition: string;
  node: string;
  /** `squeue` lines `jobid|state|node|name` of this cluster (all users). */
  squeue(): string[];
  /** Runs a Slurm client command against this cluster. */
  run(cmd: string, args: string[]): string;
  stop(): Promise<void>;
}

const BINARIES = ['/usr/sbin/munged', '/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch'];

function ensureInstalled(): void {
  if (BINARIES.every((b) => fs.existsSync(b))) return;
  const install = aptGetInstall(['slurm-wlm', 'munge']) as string;
  // only root can install; an ordinary user is told the sudo line instead of apt-get's refusal
  if (process.getuid?.() !== 0) throw new Error(`Slurm is not installed: run \`${install}\`, then rerun the tests.`);
  const r = spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'slurm-wlm', 'munge'], { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0 || !BINARIES.every((b) => fs.existsSync(b))) {
    throw new Error(`Slurm is not installed and apt-get could not install it: run \`${install}\`.\n${r.stderr}`);
  }
}

function pidIn(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(what: string, ok: () => boolean, timeoutMs: number, log = ''): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}.${log ? `\n${log}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface SlurmOptions {
  /**
   * Stand-in GPUs for the node's gres (gres/gpu over the character devices /dev/tty0..N-1), so `--gres=gpu:1`
   * is scheduled per device and Slurm sets CUDA_VISIBLE_DEVICES as on a GPU node.
   */
  gpus?: number;
}

export async function startSlurm(opts: SlurmOptions = {}): Promise<SlurmCluster> {
  ensureInstalled();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-slurm-'));
  fs.chmodSync(dir, 0o755);
  const mungeDir = path.join(dir, 'munge');
  fs.mkdirSync(mungeDir, { mode: 0o711 });
  const key = path.join(mungeDir, 'munge.key');
  fs.writeFileSync(key, randomBytes(1024), { mode: 0o400 });
  const socket = path.join(mungeDir, 'munge.socket');
  const mungePid = path.join(mungeDir, 'munged.pid');
  execFileSync('/usr/sbin/munged', ['--force', `--key-file=${key}`, `--socket=${socket}`, `--pid-file=${mungePid}`,
    `--log-file=${path.join(mungeDir, 'munged.log')}`, `--seed-file=${path.join(mungeDir, 'munged.seed')}`], { stdio: 'pipe' });

  for (const d of ['state', 'spool', 'log']) fs.mkdirSync(path.join(dir, d));
  const node = os.hostname();
  const user = os.userInfo().username;
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  const cpus = os.cpus().length;
  const memMb = Math.max(1000, Math.floor(os.totalmem() / 1024 / 1024 / 2));
  const partition = 'ketest';
  const conf = path.join(dir, 'slurm.conf');
  fs.writeFileSync(conf, [
    'ClusterName=kernelevolve-test',
    `SlurmctldHost=${node}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    'AuthType=auth/munge',
    'CredType=cred/munge',
    `AuthInfo=socket=${socket}`,
    // The daemons run as whoever runs the tests: root on CI, an ordinary user on a developer's machine (slurmctld
    // needs no privilege, and slurmd can launch the jobs of its own user with proctrack/linuxproc).
    `SlurmUser=${user}`,
    `SlurmdUser=${user}`,
    `StateSaveLocation=${dir}/state`,
    `SlurmdSpoolDir=${dir}/spool`,
    `SlurmctldPidFile=${dir}/slurmctld.pid`,
    `SlurmdPidFile=${dir}/slurmd.pid`,
    `SlurmctldLogFile=${dir}/log/slurmctld.log`,
    `SlurmdLogFile=${dir}/log/slurmd.log`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    'MpiDefault=none',
    'ReturnToService=2',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'MailProg=/bin/true',
    'MinJobAge=5',
    'KillWait=5',
    ...(opts.gpus ? ['GresTypes=gpu'] : []),
    `NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memMb}${opts.gpus ? ` Gres=gpu:${opts.gpus}` : ''} State=UNKNOWN`,
    `PartitionName=${partition} Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
    '',
  ].join('\n'));
  if (opts.gpus) {
    // slurmd reads gres.conf beside slurm.conf; it only needs the files to exist.
    fs.writeFileSync(path.join(dir, 'gres.conf'), `Name=gpu File=/dev/tty[0-${opts.gpus - 1}]\n`);
  }
  const env = { ...process.env, SLURM_CONF: conf };
  const logs = () => ['slurmctld', 'slurmd'].map((d) => {
    const f = path.join(dir, 'log', `${d}.log`);
    return fs.existsSync(f) ? `--- ${d}.log\n${fs.readFileSync(f, 'utf8').slice(-2000)}` : '';
  }).join('\n');
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  const stop = async () => {
    // Jobs first: slurmstepd outlives slurmd, so a job left running would outlive the cluster.
    try {
      run('scancel', ['--full', '--partition', partition]);
      await waitFor('the test cluster\'s jobs to end', () => !run('squeue', ['-h', '-o', '%i']).trim(), 30_000);
    } catch {
      // the controller may already be gone; the daemons are stopped below regardless
    }
    for (const f of [`${dir}/slurmd.pid`, `${dir}/slurmctld.pid`, mungePid]) {
      const pid = pidIn(f);
      if (!pid) continue;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        continue;
      }
      await waitFor(`pid ${pid} (${path.basename(f)}) to exit`, () => !alive(pid), 15_000).catch(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    execFileSync('/usr/sbin/slurmctld', ['-f', conf], { env, stdio: 'pipe' });
    execFileSync('/usr/sbin/slurmd', ['-f', conf], { env, stdio: 'pipe' });
    await waitFor('the test node to be idle in sinfo', () => {
      try {
        return /idle/.test(run('sinfo', ['-h', '-o', '%t']));
      } catch {
        return false;
      }
    }, 30_000);
  } catch (e) {
    const why = logs();
    await stop();
    throw new Error(`The test Slurm cluster did not start: ${(e as Error).message}\n${why}`);
  }

  return {
    dir, conf, env, partition, node, run, stop,
    squeue: () => run('squeue', ['-h', '-o', '%i|%T|%N|%j']).split('\n').filter(Boolean),
  };
}
