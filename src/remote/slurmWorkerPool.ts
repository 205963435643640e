// The worker jobs of one Slurm host: submitted with sbatch on demand (one per GPU, at most maxJobs),
// followed with squeue, cancelled with scancel. Which candidates a worker holds is the queue's business;
// this class only knows the jobs and tells the host when one has left the scheduler.
import { ENDED_STATES, parseSbatchJobId, parseSqueue, SQUEUE_FORMAT } from './slurmCommands';
import type { LoginShell } from './slurmLoginShell';
import { shq } from './slurmLoginShell';

export interface WorkerJob {
  jobId: string;
  /** `SUBMITTED` until squeue first reports it, then squeue's state (PENDING, RUNNING, COMPLETING, ...). */
  state: string;
  node: string;
  reason: string;
  submittedAt: number;
  /** Set once the worker process wrote a heartbeat. */
  heartbeatSeen: boolean;
  /** Why the job is over, once it is. */
  ended?: string;
}

export class SbatchError extends Error {}

export class SlurmWorkerPool {
  private readonly jobs = new Map<string, WorkerJob>();

  constructor(
    private readonly shell: LoginShell,
    /** Every job of this pool carries this name, so squeue and scancel can find them all. */
    readonly jobName: string,
    private readonly scriptPath: string,
    private readonly onChange: (job: WorkerJob, previous: string) => void = () => undefined,
  ) {}

  get all(): WorkerJob[] {
    return [...this.jobs.values()];
  }

  get active(): WorkerJob[] {
    return this.all.filter((j) => !j.ended);
  }

  get(jobId: string): WorkerJob | undefined {
    return this.jobs.get(jobId);
  }

  async submit(): Promise<WorkerJob> {
    const r = await this.shell.exec(`sbatch --parsable ${shq(this.scriptPath)}`, { timeoutS: 60 });
    const jobId = r.code === 0 ? parseSbatchJobId(r.stdout) : undefined;
    if (!jobId) {
      throw new SbatchError(`sbatch refused the worker job on ${this.shell.where}: ${(r.stderr || r.stdout).trim() || `exit ${r.code}`}. ` +
        `Check "partition", "account", "gres", "timeLimit" and "sbatchOptions" in the host's config (try \`sbatch --test-only ${this.scriptPath}\`).`);
    }
    const job: WorkerJob = { jobId, state: 'SUBMITTED', node: '', reason: '', submittedAt: Date.now(), heartbeatSeen: false };
    this.jobs.set(jobId, job);
    this.onChange(job, '');
    return job;
  }

  /** Asks squeue about this pool's jobs; returns those found to have ended since the last call. */
  async refresh(): Promise<WorkerJob[]> {
    if (!this.active.length) return [];
    const r = await this.shell.exec(`squeue -h --name=${shq(this.jobName)} -o ${shq(SQUEUE_FORMAT)}`, { timeoutS: 60 });
    if (r.code !== 0) return []; // a busy controller answers later; nothing is decided on a failed look
    const seen = new Map(parseSqueue(r.stdout).map((j) => [j.jobId, j]));
    const ended: WorkerJob[] = [];
    for (const job of this.active) {
      const now = seen.get(job.jobId);
      const previous = job.state;
      if (!now) {
        // Gone from squeue: finished, cancelled, timed out, preempted or lost with its node.
        this.end(job, previous === 'SUBMITTED' || previous === 'PENDING' ? 'left the queue before starting' : 'left the queue');
        ended.push(job);
        continue;
      }
      job.state = now.state;
      job.node = now.node || job.node;
      job.reason = now.reason;
      if (ENDED_STATES.has(now.state)) {
        this.end(job, now.state);
        ended.push(job);
      } else if (previous !== now.state) {
        this.onChange(job, previous);
      }
    }
    return ended;
  }

  /** Marks a job over without asking Slurm (its worker said it exited, or the host gave up on it). */
  end(job: WorkerJob, why: string): void {
    if (job.ended) return;
    const previous = job.state;
    job.ended = why;
    job.state = 'ENDED';
    this.onChange(job, previous);
  }

  async cancel(jobIds: string[]): Promise<void> {
    if (!jobIds.length) return;
    await this.shell.exec(`scancel ${jobIds.map(shq).join(' ')}`, { timeoutS: 60 });
  }

  /** scancel every job of the pool (also any whose sbatch answer never arrived), and wait until squeue shows none. */
  async cancelAll(waitS = 20): Promise<string[]> {
    const ids = this.active.map((j) => j.jobId);
    await this.shell.exec(`scancel ${ids.map(shq).join(' ')} ; scancel --name=${shq(this.jobName)}`, { timeoutS: 60 });
    const deadline = Date.now() + waitS * 1000;
    while (Date.now() < deadline) {
      const r = await this.shell.exec(`squeue -h --name=${shq(this.jobName)} -o '%i'`, { timeoutS: 60 });
      if (r.code === 0 && !r.stdout.trim()) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    for (const j of this.active) this.end(j, 'cancelled');
    return ids;
  }
}
