// Where a Slurm host runs its commands (sbatch, squeue, scancel, the queue's bookkeeping): the login node.
// Two implementations of one seam: this machine when the extension runs on the login node, or an SSH
// session to it. Everything the Slurm host does goes through `exec`, so both behave the same.
import { spawn } from 'node:child_process';

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ShellExecOptions {
  /** Bytes for the command's stdin (file uploads travel this way). */
  stdin?: string | Buffer;
  timeoutS?: number;
}

export interface LoginShell {
  /** Says where commands run, for messages: `this machine`, `me@login1:22`. */
  readonly where: string;
  /** Runs one POSIX shell command line on the login node. Rejects only when it could not be run at all. */
  exec(command: string, opts?: ShellExecOptions): Promise<ShellResult>;
  dispose(): Promise<void>;
}

/** Quotes one word for a POSIX shell. */
export function shq(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A path for the shell: `~/x` keeps `$HOME` expandable, the rest is quoted. */
export function shPath(p: string): string {
  if (p === '~') return '"$HOME"';
  if (p.startsWith('~/')) return `"$HOME"/${shq(p.slice(2))}`;
  return shq(p);
}

/** The login node is this machine: commands run under `sh -c`. */
export class LocalLoginShell implements LoginShell {
  readonly where = 'this machine';

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  exec(command: string, opts: ShellExecOptions = {}): Promise<ShellResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { env: this.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      const timer = opts.timeoutS
        ? setTimeout(() => {
          try {
            if (child.pid) process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, opts.timeoutS * 1000)
        : undefined;
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`Cannot run /bin/sh on this machine: ${e.message}.`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
      });
      child.stdin.on('error', () => undefined); // a command that ignores stdin may close it early
      child.stdin.end(opts.stdin ?? '');
    });
  }

  async dispose(): Promise<void> {}
}

/** Runs the host's `setup` lines (modules, environment) before each command, as a login shell would. */
export class SetupLoginShell implements LoginShell {
  constructor(private readonly inner: LoginShell, private readonly setup: string) {}

  get where(): string {
    return this.inner.where;
  }

  exec(command: string, opts?: ShellExecOptions): Promise<ShellResult> {
    return this.inner.exec(`${this.setup}\n${command}`, opts);
  }

  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}
