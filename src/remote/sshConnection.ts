// One SSH connection to one host, reused for every job: connects through ProxyJump hops (forwardOut
// through the previous hop) or a ProxyCommand, checks host keys against known_hosts, keeps the link alive,
// and reconnects with exponential backoff after it drops.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import type { ClientChannel, SFTPWrapper } from 'ssh2';
import { Client } from 'ssh2';
import { HostUnavailableError } from './host';
import { appendKnownHost, checkHostKey, fingerprint, keyTypeOf, knownHostsName, knownKeyTypes, readKnownHosts } from './knownHosts';
import type { SshTarget } from './sshConfigFile';
import { authHandlerFor, IdentityCache, SshKeyError } from './sshIdentities';
import type { PassphrasePrompt } from './sshIdentities';

/** Asked when a server offers a key known_hosts has no entry for; true trusts it (and records it). */
export type UnknownHostKeyPrompt = (host: string, fingerprint: string) => Promise<boolean>;

export interface SshConnectionOptions {
  /** The host's name in the KernelEvolve config, for messages. */
  name: string;
  target: SshTarget;
  askPassphrase?: PassphrasePrompt;
  onUnknownHostKey?: UnknownHostKeyPrompt;
  /** Attempts per connect() before the host counts as unavailable (default 5). */
  connectAttempts?: number;
  /** First backoff delay, doubled after each failed attempt (default 250 ms). */
  backoffMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
}

/**
 * The server's host key was refused. Not a HostUnavailableError on purpose: retrying cannot help, and a
 * possible interception must stop the run loudly rather than have its jobs quietly requeued.
 */
export class HostKeyError extends Error {
  readonly permanent = true;
  constructor(readonly host: string, message: string) {
    super(message);
    this.name = 'HostKeyError';
  }
}

/** Authentication failed: no key was accepted. Retrying cannot help either, so it is not requeued. */
export class SshAuthError extends Error {
  readonly permanent = true;
  constructor(readonly host: string, message: string) {
    super(message);
    this.name = 'SshAuthError';
  }
}

const DEFAULT_HOST_KEY_ALGORITHMS = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
  'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];

function algorithmsForKeyType(type: string): string[] {
  return type === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [type];
}

/** The `ssh` arguments a user would type to reach the same machine. */
function sshCommandFor(t: SshTarget): string {
  return t.alias === t.hostName ? `${t.port === 22 ? '' : `-p ${t.port} `}${t.user}@${t.hostName}` : t.alias;
}

function describe(t: SshTarget): string {
  return `${t.user}@${t.hostName}${t.port === 22 ? '' : `:${t.port}`}`;
}

export interface ExecResult {
  code: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
}

/** The server refuses the SFTP subsystem (sshd without a `Subsystem sftp` line, as Remote-SSH needs none). */
export class SftpUnavailableError extends HostUnavailableError {
  constructor(host: string, message: string) {
    super(host, message);
    this.name = 'SftpUnavailableError';
  }
}

export class SshConnection extends EventEmitter {
  private client?: Client;
  private hops: Client[] = [];
  private connecting?: Promise<Client>;
  private sftpSession?: Promise<SFTPWrapper>;
  private closed = false;
  private readonly identities = new IdentityCache();

  constructor(readonly options: SshConnectionOptions) {
    super();
  }

  get connected(): boolean {
    return !!this.client;
  }

  /** The live client, connecting (with backoff) when there is none. */
  async connect(): Promise<Client> {
    if (this.closed) throw new HostUnavailableError(this.options.name, `The connection to ${this.options.name} was closed.`);
    if (this.client) return this.client;
    this.connecting ??= this.connectWithBackoff().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connectWithBackoff(): Promise<Client> {
    const attempts = this.options.connectAttempts ?? 5;
    let delay = this.options.backoffMs ?? 250;
    let last: Error | undefined;
    for (let i = 0; i < attempts; i++) {
      if (this.closed) break;
      try {
        return await this.connectOnce();
      } catch (e) {
        if ((e as { permanent?: boolean }).permanent) throw e;
        last = e as Error;
      }
      if (i < attempts - 1) {
        this.emit('retry', { attempt: i + 1, attempts, delayMs: delay, error: last });
        await new Promise((r) => setTimeout(r, delay));
        delay *= 2;
      }
    }
    const t = this.options.target;
    throw new HostUnavailableError(this.options.name,
      `Cannot reach ${this.options.name} (${describe(t)}${t.jumps.length ? ` via ${t.jumps.map(describe).join(' -> ')}` : ''}) after ${attempts} attempts: ${last?.message ?? 'closed'}. ` +
      `Check that the machine is up and that \`ssh ${sshCommandFor(t)}\` works.`);
  }

  private async connectOnce(): Promise<Client> {
    const chain = [...this.options.target.jumps, this.options.target];
    const opened: Client[] = [];
    try {
      let sock: Duplex | undefined;
      for (const [i, hop] of chain.entries()) {
        if (i === 0 && hop.proxyCommand) sock = proxyCommandStream(hop.proxyCommand);
        const client = await this.handshake(hop, sock);
        // Jobs and verdicts are request/response messages: Nagle's algorithm would hold a verdict's last
        // segment back for a delayed ACK (about 40 ms per candidate).
        client.setNoDelay(true);
        opened.push(client);
        if (i < chain.length - 1) {
          const next = chain[i + 1];
          sock = await new Promise<Duplex>((resolve, reject) => {
            client.forwardOut('127.0.0.1', 0, next.hostName, next.port, (err, stream) => {
              if (err) reject(new Error(`the jump host ${describe(hop)} could not open a channel to ${next.hostName}:${next.port} (${err.message})`));
              else resolve(stream as unknown as Duplex);
            });
          });
        }
      }
    } catch (e) {
      for (const c of opened.reverse()) c.end();
      throw e;
    }
    const client = opened[opened.length - 1];
    this.hops = opened.slice(0, -1);
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.sftpSession = undefined;
      for (const h of this.hops) h.end();
      this.hops = [];
      this.emit('lost');
    };
    client.on('close', lost);
    client.on('end', lost);
    client.on('error', lost);
    return client;
  }

  /** One SSH handshake with host key check and authentication; resolves when the session is ready. */
  private async handshake(target: SshTarget, sock?: Duplex): Promise<Client> {
    const knownNames = [knownHostsName(target.hostKeyAlias ?? target.hostName, target.port)];
    const entries = await readKnownHosts(target.knownHostsFiles);
    const preferred = knownKeyTypes(entries, knownNames).flatMap(algorithmsForKeyType).filter((a) => DEFAULT_HOST_KEY_ALGORITHMS.includes(a));
    const serverHostKey = [...new Set([...preferred, ...DEFAULT_HOST_KEY_ALGORITHMS])];
    const client = new Client();
    let refusal: Error | undefined;
    let prompting = false;
    const timeoutMs = (target.connectTimeoutS ?? 20) * 1000;

    return new Promise<Client>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (!prompting) fail(new Error(`no answer from ${describe(target)} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
      };
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.end();
        reject(e);
      };
      const paused = <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
        prompting = true;
        clearTimeout(timer);
        try {
          return await fn(...a);
        } finally {
          prompting = false;
          arm();
        }
      };
      const askPassphrase = this.options.askPassphrase ? paused(this.options.askPassphrase) : undefined;
      const onUnknown = this.options.onUnknownHostKey ? paused(this.options.onUnknownHostKey) : undefined;

      client.once('ready', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(client);
      });
      client.on('error', (err: Error & { level?: string }) => {
        if (refusal) return fail(refusal);
        if (err.level === 'client-authentication') {
          return fail(new SshAuthError(this.options.name,
            `${describe(target)} accepted none of the keys offered (${target.agent && !target.identitiesOnly ? 'ssh-agent, ' : ''}${target.identityFiles.join(', ')}). ` +
            `Set "identityFile" for this host (or IdentityFile in ~/.ssh/config), or add the key to ssh-agent.`));
        }
        fail(err);
      });
      client.on('close', () => fail(refusal ?? new Error(`${describe(target)} closed the connection during the handshake`)));
      arm();
      client.connect({
        host: target.hostName,
        port: target.port,
        username: target.user,
        sock: sock as never,
        readyTimeout: 0,
        keepaliveInterval: this.options.keepaliveIntervalMs ?? (target.serverAliveIntervalS ? target.serverAliveIntervalS * 1000 : 15_000),
        keepaliveCountMax: this.options.keepaliveCountMax ?? target.serverAliveCountMax ?? 3,
        algorithms: { serverHostKey: serverHostKey as never },
        authHandler: authHandlerFor(target, this.identities, askPassphrase, (e) => {
          refusal = e instanceof SshKeyError ? new SshAuthError(this.options.name, e.message) : e;
        }),
        hostVerifier: ((key: Buffer, verify: (ok: boolean) => void) => {
          this.verifyHostKey(target, knownNames, key, onUnknown).then(
            () => verify(true),
            (e: Error) => {
              refusal = e;
              verify(false);
            },
          );
        }) as never,
      });
    });
  }

  private async verifyHostKey(target: SshTarget, names: string[], key: Buffer, onUnknown?: UnknownHostKeyPrompt): Promise<void> {
    const entries = await readKnownHosts(target.knownHostsFiles);
    const status = checkHostKey(entries, names, key);
    const offered = fingerprint(key);
    const who = `${names[0]} (host "${this.options.name}")`;
    const userFile = target.knownHostsFiles[0];
    switch (status.kind) {
      case 'trusted':
        return;
      case 'revoked':
        throw new HostKeyError(this.options.name,
          `The host key of ${who} (${keyTypeOf(key)} ${offered}) is marked @revoked in ${status.entry.file} line ${status.entry.line}; the connection was refused. ` +
          `Ask the machine's administrator for its current key.`);
      case 'mismatch': {
        const expected = status.expected.map((e) => `${e.keyType} ${fingerprint(e.key)} (${e.file} line ${e.line})`).join('; ');
        throw new HostKeyError(this.options.name,
          `HOST KEY MISMATCH for ${who}: known_hosts expects ${expected}, but the server offered ${keyTypeOf(key)} ${offered}. ` +
          `Someone may be intercepting the connection, or the machine was reinstalled. The connection was refused. ` +
          `If the new key is genuine (check with the machine's administrator), remove the old entry with \`ssh-keygen -R '${names[0]}'\` and connect again.`);
      }
      case 'unknown': {
        const accept = onUnknown ? await onUnknown(this.options.name, `${keyTypeOf(key)} ${offered}`) : false;
        if (!accept) {
          throw new HostKeyError(this.options.name,
            `The host key of ${who} is not in known_hosts (${target.knownHostsFiles.slice(0, 1).join(', ')}): the server offered ${keyTypeOf(key)} ${offered}. ` +
            `The connection was refused. If that fingerprint is the machine's, run again with --accept-new-host-key (or connect once with \`ssh ${sshCommandFor(target)}\`).`);
        }
        if (userFile) await appendKnownHost(userFile, names[0], key, target.hashKnownHosts);
        return;
      }
    }
  }

  /** Starts a remote command on the shared connection. */
  async exec(command: string): Promise<ClientChannel> {
    const client = await this.connect();
    return new Promise((resolve, reject) => {
      client.exec(command, (err, channel) => {
        if (err) reject(new HostUnavailableError(this.options.name, `${this.options.name} refused to run a command: ${err.message}`));
        else resolve(channel);
      });
    });
  }

  /** Runs a short command to completion and collects its output. */
  async run(command: string, stdin?: string | Buffer, timeoutMs = 60_000): Promise<ExecResult> {
    const channel = await this.exec(command);
    return new Promise((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let exit: { code: number | null; signal?: string } | undefined;
      const timer = setTimeout(() => {
        channel.close();
        reject(new HostUnavailableError(this.options.name, `${this.options.name} did not finish \`${command.slice(0, 80)}\` within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      channel.on('data', (d: Buffer) => (stdout += d.toString()));
      channel.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      channel.on('exit', (code: number | null, signal?: string) => (exit = { code, signal }));
      channel.on('close', () => {
        clearTimeout(timer);
        if (!exit) reject(new HostUnavailableError(this.options.name, `The connection to ${this.options.name} dropped while running a command.`));
        else resolve({ ...exit, stdout, stderr });
      });
      channel.end(stdin);
    });
  }

  /** The SFTP session of the current connection (opened once per connection). */
  async sftp(): Promise<SFTPWrapper> {
    const client = await this.connect();
    this.sftpSession ??= new Promise<SFTPWrapper>((resolve, reject) => {
      client.sftp((err, sftp) => {
        if (err) reject(new SftpUnavailableError(this.options.name, `${this.options.name} has no SFTP subsystem (${err.message}).`));
        else resolve(sftp);
      });
    });
    this.sftpSession.catch(() => (this.sftpSession = undefined));
    return this.sftpSession;
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    c?.end();
    for (const h of this.hops) h.end();
    this.hops = [];
  }
}

/** The stdin/stdout of `sh -c ProxyCommand` as the socket of an SSH connection. */
function proxyCommandStream(command: string): Duplex {
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'inherit'] });
  const duplex = Duplex.from({ readable: child.stdout, writable: child.stdin });
  duplex.on('close', () => child.kill());
  return duplex;
}
