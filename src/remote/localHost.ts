// The `local` host: runs the harness in a child Python on this machine.
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SpecError } from '../engine/spec';
import type { Verdict } from '../contract/verdict';
import { isVerdict } from '../contract/verdict';
import { harnessDir } from './harnessLocation';
import type { HostCheck } from '../contract/hardware';
import type { EvaluationJob } from '../contract/job';
import type { Host } from './host';

export interface LocalHostOptions {
  name?: string;
  python?: string;
  slots?: number;
  hardware?: string;
  /** Scratch folder for candidate files; a temp folder by default. */
  workdir?: string;
  devices?: number[];
}

export interface HarnessProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Parses the harness's stdout: its last line is the verdict JSON. Exit 2 means the spec is wrong (the
 *  harness said what to fix on stderr): that is the user's error, not the host's. */
export function verdictFromHarnessOutput(r: HarnessProcessResult): Verdict {
  if (r.code === 2) {
    const said = r.stderr.split('\n').filter((l) => l.startsWith('kernelevolve_harness: '));
    if (said.length) throw new SpecError(said.map((l) => l.slice('kernelevolve_harness: '.length)).join('\n'));
  }
  const lines = r.stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  try {
    const parsed: unknown = JSON.parse(last);
    if (isVerdict(parsed)) return parsed;
  } catch {
    // fall through: the harness itself failed, which is not the candidate's fault
  }
  const tail = (r.stderr || r.stdout).slice(-2000);
  throw new Error(
    `The harness did not print a verdict (exit ${r.code ?? r.signal}). Check that Python 3.9+ with numpy is installed on the host.\n${tail}`,
  );
}

export class LocalHost implements Host {
  readonly name: string;
  readonly slots: number;
  readonly hardware?: string;
  private readonly python: string;
  private readonly workdir?: string;
  private readonly devices?: number[];
  private nextDevice = 0;

  constructor(opts: LocalHostOptions = {}) {
    this.name = opts.name ?? 'local';
    this.python = opts.python ?? process.env.KERNELEVOLVE_PYTHON ?? 'python3';
    this.slots = Math.max(1, opts.slots ?? 1);
    this.hardware = opts.hardware;
    this.workdir = opts.workdir;
    this.devices = opts.devices;
  }

  async evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<Verdict> {
    const root = this.workdir ?? path.join(os.tmpdir(), 'kernelevolve');
    await fs.mkdir(root, { recursive: true });
    const dir = await fs.mkdtemp(path.join(root, `${job.id}-`));
    const candidatePath = path.join(dir, job.candidateFileName);
    await fs.writeFile(candidatePath, job.candidateSource);
    const args = ['-m', 'kernelevolve_harness', 'evaluate', '--spec', job.specPath, '--candidate', candidatePath,
      '--baseline', job.baselinePath, '--json'];
    if (job.profile) args.push('--profile');
    const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: prependPath(harnessDir(), process.env.PYTHONPATH) };
    let device: string | undefined;
    if (this.devices?.length) {
      device = String(this.devices[this.nextDevice++ % this.devices.length]);
      env.CUDA_VISIBLE_DEVICES = device;
    }
    // compiles run in parallel; the harness holds this lock only while timing, so timings never share a device
    args.push('--lock', await deviceLockFile(device));
    const started = Date.now();
    try {
      const r = await runProcess(this.python, args, { env, cwd: dir, signal, timeoutS: job.timeoutS });
      const verdict = verdictFromHarnessOutput(r);
      return { ...verdict, host: this.name, wall_ms: Date.now() - started, placement: { host: this.name, device } };
    } finally {
      await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  async check(): Promise<HostCheck> {
    const script = [
      'import platform, shutil, subprocess',
      'facts = {"python": platform.python_version()}',
      'try:\n import numpy; facts["numpy"] = numpy.__version__\nexcept Exception: facts["numpy"] = "missing"',
      'for cc in ("g++", "nvcc"):\n p = shutil.which(cc)\n facts[cc] = subprocess.run([p, "--version"], capture_output=True, text=True).stdout.splitlines()[0] if p else "missing"',
      'g = shutil.which("nvidia-smi")',
      'facts["gpu"] = subprocess.run([g, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().replace("\\n", ", ") if g else "none"',
      'for mod in ("torch", "triton"):\n try:\n  facts[mod] = __import__(mod).__version__\n except Exception:\n  facts[mod] = "missing"',
      'import json; print(json.dumps(facts))',
    ].join('\n');
    try {
      const r = await runProcess(this.python, ['-c', script], { timeoutS: 60 });
      const facts = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>;
      return { host: this.name, reachable: true, facts };
    } catch (e) {
      return { host: this.name, reachable: false, facts: {}, error: (e as Error).message };
    }
  }

  async dispose(): Promise<void> {}
}

/** One lock per GPU, one for the CPU: shared by every KernelEvolve process on this machine. */
async function deviceLockFile(device: string | undefined): Promise<string> {
  const dir = path.join(os.tmpdir(), 'kernelevolve-locks');
  await fs.mkdir(dir, { recursive: true });
  return path.join(dir, device === undefined ? 'cpu.lock' : `gpu${device}.lock`);
}

function prependPath(dir: string, existing: string | undefined): string {
  return existing ? `${dir}${path.delimiter}${existing}` : dir;
}

/** Runs a process in its own process group; abort or timeout kills the whole group. */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; signal?: AbortSignal; timeoutS?: number } = {},
): Promise<HarnessProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env, cwd: opts.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const onAbort = () => killGroup();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = opts.timeoutS ? setTimeout(killGroup, opts.timeoutS * 1000) : undefined;
    child.on('error', (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`Cannot start ${cmd}: ${err.message}. Install it or set the host's "python" setting.`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) reject(opts.signal.reason ?? new Error('aborted'));
      else resolve({ code, signal: sig, stdout, stderr });
    });
  });
}
