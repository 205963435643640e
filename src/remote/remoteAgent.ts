// The small Python program that runs on an SSH host for the life of a connection: it takes jobs as JSON
// lines on stdin, writes each job's files into its own folder, runs the harness in a process group of its
// own (setsid), and answers with JSON lines. It kills a job's whole group on request, on timeout, and for
// every job when its stdin closes (the connection died), so nothing outlives the client.
// One long-lived agent per host keeps a job to a single round trip: no new process or SSH channel per job.
import { EventEmitter } from 'node:events';
import type { ClientChannel } from 'ssh2';

export const AGENT_FILE = 'kernelevolve_agent.py';

export const AGENT_SOURCE = String.raw`# KernelEvolve host agent: runs harness jobs sent as JSON lines on stdin (see src/remote/remoteAgent.ts).
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

out_lock = threading.Lock()
jobs = {}
cancelled = set()  # kills that arrived before their job's process existed
jobs_lock = threading.Lock()
to_clean = set()  # finished jobs whose folders are not removed yet
shutting_down = False


def send(msg):
    line = json.dumps(msg) + "\n"
    with out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_job(msg):
    job_id = msg["id"]
    job_dir = msg["dir"]
    # Preparing under the lock means a shutdown never races a job half set up: it sees every folder there is.
    with jobs_lock:
        if shutting_down:
            return
        try:
            os.makedirs(job_dir, exist_ok=True)
            for name, text in msg.get("files", {}).items():
                path = os.path.join(job_dir, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            env = dict(os.environ)
            env.update(msg.get("env", {}))
            argv = [sys.executable if a == "{python}" else a for a in msg["argv"]]
            started = time.time()
            proc = subprocess.Popen(argv, cwd=job_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except Exception as e:
            send({"id": job_id, "event": "error", "message": "%s: %s" % (type(e).__name__, e)})
            shutil.rmtree(job_dir, ignore_errors=True)
            return
        jobs[job_id] = (proc, job_dir)
        if job_id in cancelled:
            kill_group(proc.pid)
    send({"id": job_id, "event": "started", "pgid": proc.pid})
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=msg.get("timeout") or None)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid)
        stdout, stderr = proc.communicate()
    elapsed_ms = (time.time() - started) * 1000.0
    # Whatever the candidate left behind in its group goes too.
    kill_group(proc.pid)
    with jobs_lock:
        jobs.pop(job_id, None)
        if not msg.get("keep"):
            to_clean.add(job_dir)
    send({"id": job_id, "event": "exit", "code": proc.returncode, "timed_out": timed_out,
          "stdout": stdout.decode("utf-8", "replace"), "stderr": stderr.decode("utf-8", "replace")[-20000:],
          "elapsed_ms": elapsed_ms})
    # Cleaning up is off the critical path: the verdict is already on its way (a shutdown cleans what is left).
    if not msg.get("keep"):
        shutil.rmtree(job_dir, ignore_errors=True)
        with jobs_lock:
            to_clean.discard(job_dir)


def main():
    send({"event": "ready", "python": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3], "pid": os.getpid()})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("op") == "run":
            threading.Thread(target=run_job, args=(msg,), daemon=True).start()
        elif msg.get("op") == "kill":
            with jobs_lock:
                entry = jobs.get(msg.get("id"))
                if entry is None:
                    cancelled.add(msg.get("id"))
                else:
                    kill_group(entry[0].pid)
    # stdin closed: the client is gone; take every job with us, and its folder.
    global shutting_down
    with jobs_lock:
        shutting_down = True
        running = list(jobs.values())
        finished = list(to_clean)
    for proc, job_dir in running:
        kill_group(proc.pid)
    for proc, job_dir in running:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(job_dir, ignore_errors=True)
    for job_dir in finished:
        shutil.rmtree(job_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
`;

export interface AgentJob {
  id: string;
  /** Folder of the job, relative to the workdir (the agent's cwd). */
  dir: string;
  /** Files to write into the folder, by relative name. */
  files: Record<string, string>;
  /** The command; `{python}` stands for the agent's own interpreter. */
  argv: string[];
  env?: Record<string, string>;
  timeoutS?: number;
}

export interface AgentExit {
  code: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Lifetime of the job's process on the host (start to exit): the harness's own time. */
  elapsedMs: number;
}

interface Pending {
  resolve: (r: AgentExit) => void;
  reject: (e: Error) => void;
  onStarted?: (pgid: number) => void;
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
    if (msg.event === 'started') p.onStarted?.(Number(msg.pgid));
    else if (msg.event === 'error') {
      this.pending.delete(String(msg.id));
      p.reject(new Error(`the host could not start the job: ${String(msg.message)}`));
    } else if (msg.event === 'exit') {
      this.pending.delete(String(msg.id));
      p.resolve({
        code: msg.code as number | null,
        timedOut: !!msg.timed_out,
        stdout: String(msg.stdout ?? ''),
        stderr: String(msg.stderr ?? ''),
        elapsedMs: Number(msg.elapsed_ms ?? 0),
      });
    }
  }

  run(job: AgentJob, onStarted?: (pgid: number) => void): Promise<AgentExit> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      this.pending.set(job.id, { resolve, reject, onStarted });
      this.channel.write(JSON.stringify({ op: 'run', id: job.id, dir: job.dir, files: job.files, argv: job.argv,
        env: job.env ?? {}, timeout: job.timeoutS }) + '\n');
    });
  }

  /** Kills the job's whole process group on the host. */
  kill(id: string): void {
    if (!this.closedWith) this.channel.write(JSON.stringify({ op: 'kill', id }) + '\n');
  }

  /** Closing stdin makes the agent kill what is left and exit. */
  close(): void {
    this.channel.end();
  }
}
