// The `ssh` host: evaluates candidates on another machine over one reused SSH connection. The harness is
// uploaded once per version; each job goes to the harness's host agent (kernelevolve_harness/host_agent.py), which
// runs it through the job runner in a folder of its own. This file only moves bytes.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { harnessDir } from './harnessLocation';
import type { HostCheck } from '../contract/hardware';
import type { EvaluationJob, PoolVerdict } from '../contract/job';
import type { Host, HostLogListener } from './host';
import { HostUnavailableError } from './host';
import type { SshHostConfig } from './hostConfig';
import { expandHome } from './hostConfig';
import { runnerJob, verdictFromAnswer } from './harnessJob';
import { checkWithHarness } from './localHost';
import { AGENT_MODULE, AgentSession } from './remoteAgent';
import { describeSpec } from './specDescription';
import { uploadBundle } from './sftpUpload';
import type { FileBundle } from './fileBundle';
import { harnessBundle, specBundle } from './fileBundle';
import { resolveSshTarget } from './sshConfigFile';
import type { SshTarget } from './sshConfigFile';
import { SshConnection } from './sshConnection';
import type { UnknownHostKeyPrompt } from './sshConnection';
import type { PassphrasePrompt } from './sshIdentities';

export interface SshHostOptions {
  /** Asked for an unknown host key; without it unknown keys are refused. */
  onUnknownHostKey?: UnknownHostKeyPrompt;
  /** Asked for the passphrase of an encrypted key file. */
  askPassphrase?: PassphrasePrompt;
  /** ssh_config to read instead of ~/.ssh/config. */
  sshConfigFile?: string;
  /** Connect attempts before a job is handed back as unavailable (default 5, backoff from 250 ms). */
  connectAttempts?: number;
  backoffMs?: number;
  keepaliveIntervalMs?: number;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A workdir for the remote shell: `~/x` stays relative to $HOME, anything else is quoted. */
function remotePath(p: string): string {
  if (p === '~') return '"$HOME"';
  if (p.startsWith('~/')) return `"$HOME"/${shellQuote(p.slice(2))}`;
  return shellQuote(p);
}

/**
 * The host answers but cannot run jobs as configured (no Python, workdir not writable). Not requeued: the
 * same job would fail the same way; the message says what to change.
 */
export class HostSetupError extends Error {
  readonly permanent = true;
  constructor(readonly host: string, message: string) {
    super(message);
    this.name = 'HostSetupError';
  }
}

interface Session {
  agent: AgentSession;
  /** Absolute workdir on the host. */
  workdir: string;
  harnessDir: string;
  specs: Set<string>;
}

/** The agent's file in the uploaded harness: its presence says the upload completed. */
const AGENT_PATH = 'kernelevolve_harness/host_agent.py';

export class SshHost implements Host {
  /** The harness's job runner applies each job's timeout from its start on the host. */
  readonly enforcesTimeout = true;
  readonly name: string;
  readonly slots: number;
  readonly hardware?: string;
  private readonly connection: Promise<SshConnection>;
  private session?: Promise<Session>;
  private readonly devices: number[];
  private readonly deviceLoad = new Map<number, number>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private disposed = false;
  private readonly listeners = new Set<HostLogListener>();

  constructor(readonly config: SshHostConfig, readonly options: SshHostOptions = {}) {
    this.name = config.name;
    this.slots = Math.max(1, config.slots ?? 1);
    this.hardware = config.hardware;
    this.devices = config.devices ?? [];
    for (const d of this.devices) this.deviceLoad.set(d, 0);
    this.connection = this.makeConnection();
    // A config error surfaces on first use, not as an unhandled rejection now.
    this.connection.catch(() => undefined);
  }

  private async makeConnection(): Promise<SshConnection> {
    const target: SshTarget = await resolveSshTarget(this.config.host, {
      port: this.config.port,
      user: this.config.user,
      identityFile: this.config.identityFile ? expandHome(this.config.identityFile) : undefined,
      knownHostsFile: this.config.knownHostsFile ? expandHome(this.config.knownHostsFile) : undefined,
    }, this.options.sshConfigFile);
    const conn = new SshConnection({
      name: this.name,
      target,
      askPassphrase: this.options.askPassphrase,
      onUnknownHostKey: this.options.onUnknownHostKey,
      connectAttempts: this.options.connectAttempts,
      backoffMs: this.options.backoffMs,
      keepaliveIntervalMs: this.options.keepaliveIntervalMs,
    });
    conn.on('lost', () => {
      this.session = undefined;
      if (!this.disposed) this.log('warn', `${this.name}: the SSH connection dropped; its running jobs go back to the queue.`);
    });
    conn.on('retry', (r: { attempt: number; attempts: number; delayMs: number; error?: Error }) => {
      this.log('warn', `${this.name}: connecting failed (${r.error?.message ?? 'closed'}); attempt ${r.attempt + 1} of ${r.attempts} in ${r.delayMs} ms.`);
    });
    return conn;
  }

  private get python(): string {
    return this.config.python ?? 'python3';
  }

  /** Connects, prepares the workdir, uploads the harness if this version is missing, starts the agent. */
  private async openSession(): Promise<Session> {
    const conn = await this.connection;
    const bundle = await harnessBundle(harnessDir());
    const workdirSpec = this.config.workdir ?? '~/.cache/kernelevolve';
    const harnessName = `harness-${bundle.hash}`;
    const w = remotePath(workdirSpec);
    const prep = await conn.run(
      `mkdir -p ${w}/jobs ${w}/specs && cd ${w} && { pwd; ` +
      `if [ -f ${harnessName}/${AGENT_PATH} ]; then echo present; else echo missing; fi; ` +
      // leftovers of uploads and jobs cut off by a dropped connection long ago
      `find . -maxdepth 2 \\( -name '*.partial-*' -o -path './jobs/*' \\) -mmin +1440 -prune -exec rm -rf {} + 2>/dev/null; true; }`);
    if (prep.code !== 0) {
      throw new HostSetupError(this.name, `Cannot create the workdir ${workdirSpec} on ${this.name}: ${prep.stderr.trim() || `exit ${prep.code}`}. Set "workdir" for this host to a writable folder.`);
    }
    const [workdir, state] = prep.stdout.trim().split('\n');
    if (state !== 'present') {
      await uploadBundle(conn, bundle, `${workdir}/${harnessName}`, this.python);
      this.log('info', `${this.name}: uploaded the harness (version ${bundle.hash}) to ${workdir}.`);
    }
    const agentDir = `${workdir}/${harnessName}`;
    const channel = await conn.exec(`cd ${shellQuote(workdir)} && PYTHONPATH=${shellQuote(agentDir)} && export PYTHONPATH && exec ${this.python} -u -m ${AGENT_MODULE}`);
    const agent = new AgentSession(channel, () => new HostUnavailableError(this.name,
      `The connection to ${this.name} dropped (or its agent stopped); the job will be tried again.`));
    let ready: { python: string; version: string };
    try {
      ready = await agent.ready;
    } catch (e) {
      if (!conn.connected) throw e; // the link dropped meanwhile: the pool tries again
      throw new HostSetupError(this.name, `${this.name} could not start \`${this.python}\`: ${(e as Error).message}. ` +
        `Install Python 3.9+ there, or set "python" for this host to its path.`);
    }
    const [major, minor] = ready.version.split('.').map(Number);
    if (major < 3 || (major === 3 && minor < 9)) {
      agent.close();
      throw new HostSetupError(this.name, `${this.name} has Python ${ready.version}; the harness needs 3.9 or newer. Set "python" for this host to a newer one.`);
    }
    const t = conn.options.target;
    this.log('info', `${this.name}: connected to ${t.user}@${t.hostName}:${t.port}${t.jumps.length ? ` via ${t.jumps.map((j) => j.hostName).join(', ')}` : ''}, Python ${ready.version}, workdir ${workdir}.`);
    return { agent, workdir, harnessDir: agentDir, specs: new Set() };
  }

  onLog(listener: HostLogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    for (const l of this.listeners) l(level, message);
  }

  private async getSession(): Promise<Session> {
    if (this.disposed) throw new HostUnavailableError(this.name, `Host ${this.name} was shut down.`);
    if (!this.session) {
      const s = this.openSession();
      this.session = s;
      s.catch(() => {
        if (this.session === s) this.session = undefined;
      });
    }
    const s = await this.session;
    if (!s.agent.alive) {
      this.session = undefined;
      return this.getSession();
    }
    return s;
  }

  private async acquireSlot(): Promise<void> {
    if (this.running < this.slots) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private takeDevice(): number | undefined {
    if (!this.devices.length) return undefined;
    let best = this.devices[0];
    for (const d of this.devices) if (this.deviceLoad.get(d)! < this.deviceLoad.get(best)!) best = d;
    this.deviceLoad.set(best, this.deviceLoad.get(best)! + 1);
    return best;
  }

  private async ensureSpec(session: Session, bundle: FileBundle): Promise<string> {
    const dir = `${session.workdir}/specs/${bundle.hash}`;
    if (!session.specs.has(bundle.hash)) {
      const conn = await this.connection;
      const r = await conn.run(`test -d ${shellQuote(dir)} && echo present || echo missing`);
      if (r.stdout.trim() !== 'present') await uploadBundle(conn, bundle, dir, this.python);
      session.specs.add(bundle.hash);
    }
    return dir;
  }

  async evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<PoolVerdict> {
    signal?.throwIfAborted();
    await this.acquireSlot();
    const device = this.takeDevice();
    try {
      return await this.evaluateInSlot(job, device, signal);
    } finally {
      if (device !== undefined) this.deviceLoad.set(device, this.deviceLoad.get(device)! - 1);
      this.releaseSlot();
    }
  }

  private async evaluateInSlot(job: EvaluationJob, device: number | undefined, signal?: AbortSignal): Promise<PoolVerdict> {
    const started = Date.now();
    const session = await this.getSession();
    signal?.throwIfAborted();
    const spec = await describeSpec(job.specPath);
    const bundle = await specBundle(spec.specPath, spec.sourcePath);
    const specDir = await this.ensureSpec(session, bundle);
    const jobDir = `jobs/${job.id.replace(/[^A-Za-z0-9_.-]/g, '_')}-${randomBytes(4).toString('hex')}`;
    const overridden = path.resolve(job.baselinePath) !== spec.sourcePath;
    const request = runnerJob(job, {
      spec: `${specDir}/${bundle.specRel}`,
      baseline: `${specDir}/${bundle.sourceRel}`,
      baselineSource: overridden ? { name: `baseline${path.extname(job.baselinePath)}`, text: await fs.readFile(job.baselinePath, 'utf8') } : undefined,
      device: device === undefined ? undefined : String(device),
      toolchain: this.config.toolchain,
    });
    const id = jobDir;
    const onAbort = () => session.agent.kill(id);
    signal?.addEventListener('abort', onAbort, { once: true });
    let envelope: unknown;
    try {
      envelope = await session.agent.run({ id, dir: jobDir, job: request });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const verdict = verdictFromAnswer(envelope, this.name);
    return { ...verdict, wall_ms: Date.now() - started };
  }

  /** The harness's own check (`check-host`), run on the host with the uploaded harness, as jobs run there. */
  async check(): Promise<HostCheck> {
    let where = '';
    try {
      const conn = await this.connection;
      const t = conn.options.target;
      where = `${t.user}@${t.hostName}:${t.port}${t.jumps.length ? ` via ${t.jumps.map((j) => j.hostName).join(',')}` : ''}`;
      const session = await this.getSession();
      return await checkWithHarness(this.name, async (args) => {
        const r = await conn.run(`cd ${shellQuote(session.workdir)} && PYTHONPATH=${shellQuote(session.harnessDir)} ${this.python} ${args.map(shellQuote).join(' ')}`);
        return { code: r.code, signal: null, stdout: r.stdout, stderr: r.stderr };
      }, { ssh: where });
    } catch (e) {
      if (e instanceof HostSetupError) return { host: this.name, reachable: true, facts: { ssh: where, python: 'missing' }, error: e.message };
      return { host: this.name, reachable: false, facts: where ? { ssh: where } : {}, error: (e as Error).message };
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const s = this.session;
    this.session = undefined;
    if (s) {
      try {
        (await s).agent.close();
      } catch {
        // never started
      }
    }
    try {
      await (await this.connection).close();
    } catch {
      // nothing to close
    }
  }
}
