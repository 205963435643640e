// The host's side of the job-queue folder on the shared filesystem (the worker's side is
// harness/kernelevolve_harness/worker_service.py, which documents the layout). Every operation is one
// command on the login node, so a remote login node costs one round-trip per operation.
import type { LoginShell } from './slurmLoginShell';
import { shq } from './slurmLoginShell';

export interface QueuedJob {
  id: string;
  spec: string;
  baseline: string;
  candidate_name: string;
  candidate_source: string;
  profile?: boolean;
  inputs?: 'problem';
  timeout_s?: number;
  memory_share?: number;
  background?: boolean;
  /** Host clock, epoch seconds: when the candidate became ready. */
  ready_at: number;
}

export interface JobResult {
  name: string;
  id: string;
  worker: string;
  job_id: string;
  node: string;
  device: string;
  ready_at?: number;
  queued_at?: number;
  claimed_at: number;
  started_at: number;
  finished_at: number;
  attempts: number;
  /** The job runner's envelope, unchecked here: the host parses it (src/contract/verdictEnvelope.ts). */
  envelope?: unknown;
}

export interface WorkerBeat {
  worker: string;
  job_id: string;
  node: string;
  device: string;
  state: 'idle' | 'busy' | 'exited';
  current: string | null;
  judged: number;
  age_s: number;
  reason?: string;
  /** In the exit note: the jobs the worker handed back itself. */
  requeued?: string[];
}

export interface QueueState {
  now: number;
  done: JobResult[];
  workers: Record<string, WorkerBeat>;
  claimed: Record<string, string[]>;
  pending: string[];
}

export class QueueCommandError extends Error {}

export class SlurmJobQueue {
  constructor(
    private readonly shell: LoginShell,
    /** Absolute path of the queue folder. */
    readonly dir: string,
    private readonly python: string,
    /** Folder holding kernelevolve_harness/ on the login node. */
    private readonly harnessParent: string,
  ) {}

  private async service(args: string[]): Promise<unknown> {
    // -S: the queue's bookkeeping needs only the standard library, and skipping site-packages keeps each tick cheap.
    const cmd = `PYTHONPATH=${shq(this.harnessParent)} ${shq(this.python)} -S -m kernelevolve_harness.worker_service ` +
      `${args.map(shq).join(' ')} --queue ${shq(this.dir)}`;
    const r = await this.shell.exec(cmd, { timeoutS: 60 });
    const last = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code === 0) {
      try {
        return JSON.parse(last);
      } catch {
        // fall through
      }
    }
    throw new QueueCommandError(`The queue command \`${args[0]}\` failed on ${this.shell.where} (exit ${r.code}): ${(r.stderr || r.stdout).trim().slice(-600)}`);
  }

  async ensure(): Promise<void> {
    const dirs = ['pending', 'claimed', 'done', 'cancel', 'workers', 'work', 'logs'].map((d) => shq(`${this.dir}/${d}`));
    const r = await this.shell.exec(`mkdir -p ${dirs.join(' ')}`);
    if (r.code !== 0) {
      throw new QueueCommandError(`Cannot create the queue folder ${this.dir} on ${this.shell.where}: ${r.stderr.trim()}. Check the host's "workdir".`);
    }
  }

  /** Makes a job ready in one atomic step: workers never see a half-written file. */
  async submit(name: string, job: QueuedJob): Promise<void> {
    const tmp = shq(`${this.dir}/pending/.${name}.tmp`);
    const r = await this.shell.exec(`cat > ${tmp} && mv -f ${tmp} ${shq(`${this.dir}/pending/${name}.json`)}`, { stdin: JSON.stringify(job) });
    if (r.code !== 0) throw new QueueCommandError(`Cannot write a job into ${this.dir}/pending on ${this.shell.where}: ${r.stderr.trim()}.`);
  }

  async poll(ack: string[]): Promise<QueueState> {
    return (await this.service(['poll', '--ack', ...ack])) as QueueState;
  }

  async requeue(worker: string): Promise<string[]> {
    return ((await this.service(['requeue', '--worker', worker])) as { requeued: string[] }).requeued;
  }

  async cancel(name: string): Promise<void> {
    await this.service(['cancel', '--name', name]);
  }

  async stop(): Promise<void> {
    await this.service(['stop']);
  }

  /** Removes the candidates' files; keeps the worker logs and heartbeats for a post-mortem. */
  async clear(): Promise<void> {
    const dirs = ['pending', 'claimed', 'done', 'cancel', 'work'].map((d) => shq(`${this.dir}/${d}`));
    await this.shell.exec(`rm -rf ${dirs.join(' ')}`);
  }
}
