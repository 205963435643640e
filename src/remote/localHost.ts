// The `local` host: hands each job to the harness's job runner (`run-job`) in a child Python on this machine.
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { HostCheck } from '../contract/hardware';
import type { EvaluationJob, PoolVerdict } from '../contract/job';
import type { Toolchain } from '../contract/spec';
import { harnessDir } from './harnessLocation';
import { runnerJob, verdictFromAnswer } from './harnessJob';
import type { Host } from './host';

export interface LocalHostOptions {
  name?: string;
  python?: string;
  slots?: number;
  hardware?: string;
  /** Scratch folder for candidate files; a temp folder by default. */
  workdir?: string;
  devices?: number[];
  /** This machine's toolchain for custom-backend specs. */
  toolchain?: Toolchain;
  /** The process whose end ends the warm-worker server the jobs start (the editor's extension host, so that
   *  nothing of a run outlives the editor); unset, the server outlives the CLI until idle, for the next call. */
  warmServerOwner?: number;
}

export interface HarnessProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export class LocalHost implements Host {
  readonly name: string;
  readonly slots: number;
  readonly hardware?: string;
  private readonly python: string;
  private readonly workdir?: string;
  private readonly devices?: number[];
  private readonly toolchain?: Toolchain;
  private readonly warmServerOwner?: number;
  private nextDevice = 0;
  /** The harness's job runner applies each job's timeout from its start. */
  readonly enforcesTimeout = true;

  constructor(opts: LocalHostOptions = {}) {
    this.name = opts.name ?? 'local';
    this.python = opts.python ?? process.env.KERNELEVOLVE_PYTHON ?? 'python3';
    this.slots = Math.max(1, opts.slots ?? 1);
    this.hardware = opts.hardware;
    this.workdir = opts.workdir;
    this.devices = opts.devices;
    this.toolchain = opts.toolchain;
    this.warmServerOwner = opts.warmServerOwner;
  }

  async evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<PoolVerdict> {
    const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: prependPath(harnessDir(), process.env.PYTHONPATH) };
    if (this.warmServerOwner && !env.KERNELEVOLVE_WARM_OWNER) env.KERNELEVOLVE_WARM_OWNER = String(this.warmServerOwner);
    if (this.workdir) {
      await fs.mkdir(this.workdir, { recursive: true });
      env.TMPDIR = this.workdir; // the runner's scratch folders go here
    }
    const device = this.devices?.length ? String(this.devices[this.nextDevice++ % this.devices.length]) : undefined;
    const request = runnerJob(job, { spec: job.specPath, baseline: job.baselinePath, device, toolchain: this.toolchain });
    const started = Date.now();
    // The runner stops the job at its limit and answers "timeout" itself; this backstop only catches a runner
    // that cannot answer at all.
    const r = await runProcess(this.python, ['-m', 'kernelevolve_harness', 'run-job'], {
      env, signal, input: JSON.stringify(request), timeoutS: job.timeoutS ? job.timeoutS + RUNNER_GRACE_S : undefined,
    });
    const verdict = verdictFromAnswer(r.stdout, this.name, {}, r.stderr);
    return { ...verdict, wall_ms: Date.now() - started };
  }

  async check(): Promise<HostCheck> {
    return checkWithHarness(this.name, (args) => runProcess(this.python, args, {
      env: { ...process.env, PYTHONPATH: prependPath(harnessDir(), process.env.PYTHONPATH) }, timeoutS: 120 }));
  }

  async dispose(): Promise<void> {}
}

function prependPath(dir: string, existing: string | undefined): string {
  return existing ? `${dir}${path.delimiter}${existing}` : dir;
}

/** A job's runner gets this long past the job's own limit to answer before it is killed. */
const RUNNER_GRACE_S = 60;
/** After SIGTERM, the runner has this long to stop its job's tree and answer. */
const STOP_GRACE_MS = 5000;

/**
 * Runs a process in its own process group. Abort sends SIGTERM (the harness's job runner then stops its job's
 * whole tree and answers), then SIGKILL to the group if it is still there; the timeout kills the group.
 */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; signal?: AbortSignal; timeoutS?: number; input?: string } = {},
): Promise<HarnessProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env, cwd: opts.cwd, detached: true,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // a child that exits without reading says why on stderr
      child.stdin.end(opts.input);
    }
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    let stopTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      try {
        if (child.pid) process.kill(child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      stopTimer = setTimeout(killGroup, STOP_GRACE_MS);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = opts.timeoutS ? setTimeout(killGroup, opts.timeoutS * 1000) : undefined;
    const done = () => {
      clearTimeout(timer);
      clearTimeout(stopTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      done();
      reject(new Error(`Cannot start ${cmd}: ${err.message}. Install it or set the host's "python" setting.`));
    });
    child.on('close', (code, sig) => {
      done();
      if (opts.signal?.aborted) reject(opts.signal.reason ?? new Error('aborted'));
      else resolve({ code, signal: sig, stdout, stderr });
    });
  });
}

/** The harness's `check-host` facts, run by `exec` wherever the host runs candidates. */
export async function checkWithHarness(host: string, exec: (args: string[]) => Promise<HarnessProcessResult>,
  known: Record<string, string> = {}): Promise<HostCheck> {
  try {
    const r = await exec(['-m', 'kernelevolve_harness', 'check-host']);
    const last = r.stdout.trim().split('\n').pop() ?? '';
    try {
      const facts = JSON.parse(last) as Record<string, string>;
      return { host, reachable: true, facts: { ...known, ...facts } };
    } catch {
      const said = (r.stderr || r.stdout).trim().split('\n').pop() ?? `exit ${r.code ?? r.signal}`;
      return { host, reachable: true, facts: { ...known, python: 'missing' },
        error: `The harness's check failed on ${host}: ${said}. Install Python 3.9+ there, or set "python" for this host.` };
    }
  } catch (e) {
    return { host, reachable: false, facts: known, error: (e as Error).message };
  }
}
