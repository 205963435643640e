// The client side of the host agent an SSH host runs for the life of a connection (the harness module
// kernelevolve_harness/host_agent.py, tested by pytest): jobs go out as JSON lines, each answered with the job
// runner's envelope. The agent owns each job's folder, timing lock, timeout and process tree; it stops every job
// when its stdin closes (the connection died), so nothing outlives the client.
import { EventEmitter } from 'node:events';
import type { ClientChannel } from 'ssh2';
import type { RunnerJob } from './harnessJob';

/** Run as `python3 -u -m kernelevolve_harness.host_agent` with the uploaded harness on PYTHONPATH. */
export const AGENT_MODULE = 'kernelevolve_harness.host_agent';

export interface AgentJob {
  id: string;
  /** Folder of the job, relative to the workdir (the agent's cwd); removed once answered. */
  dir: string;
  job: RunnerJob;
}

interface Pending {
  /** With the runner's envelope, unchecked: the host parses it (src/contract/verdictEnvelope.ts). */
  resolve: (envelope: unknown) => void;
  reject: (e: Error) => void;
  onStarted?: () => void;
}

/** The client side of one agent over one SSH channel. */
export class AgentSession extends EventEmitter {
  private buffer = '';
  private readonly pending = new Map<string, Pending>();
  private closedWith?: Error;
  readonly ready: Promise<{ python: string; version: string }>;

  constructor(private readonly channel: ClientChannel, private readonly onLost: () => Error) {
    super();
    let resolveReady!: (v: { python: string; version: string }) => void;
    let rejectReady!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      resolveReady = res;
      rejectReady = rej;
    });
    let stderr = '';
    let exitCode: number | null | undefined;
    let isReady = false;
    channel.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    channel.on('exit', (code: number | null) => (exitCode = code));
    channel.on('data', (d: Buffer) => {
      this.buffer += d.toString();
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (msg.event === 'ready') {
          isReady = true;
          resolveReady(msg as { python: string; version: string });
        }
        else this.dispatch(msg);
      }
    });
    channel.on('close', () => {
      const err = this.onLost();
      this.closedWith = err;
      if (!isReady) {
        rejectReady(exitCode === undefined ? err : new Error(`it exited with code ${exitCode}${stderr.trim() ? ` saying: ${stderr.trim()}` : ''}`));
      }
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.emit('closed');
    });
  }

  get alive(): boolean {
    return !this.closedWith;
  }

  private dispatch(msg: Record<string, unknown>): void {
    const p = this.pending.get(String(msg.id));
    if (!p) return;
    if (msg.event === 'started') p.onStarted?.();
    else if (msg.event === 'error') {
      this.pending.delete(String(msg.id));
      p.reject(new Error(`the host could not start the job: ${String(msg.message)}`));
    } else if (msg.event === 'done') {
      this.pending.delete(String(msg.id));
      p.resolve(msg.envelope);
    }
  }

  /** Resolves with the runner's envelope (a verdict, a spec error, a harness error, or "cancelled"). */
  run(job: AgentJob, onStarted?: () => void): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      this.pending.set(job.id, { resolve, reject, onStarted });
      this.channel.write(JSON.stringify({ op: 'run', id: job.id, dir: job.dir, job: job.job }) + '\n');
    });
  }

  /** Stops the job with its whole process tree on the host. */
  kill(id: string): void {
    if (!this.closedWith) this.channel.write(JSON.stringify({ op: 'kill', id }) + '\n');
  }

  /** Closing stdin makes the agent kill what is left and exit. */
  close(): void {
    this.channel.end();
  }
}
