// A real OpenSSH server on 127.0.0.1 for tests: its own host key, user key, config and port, started and
// stopped by pid. Nothing here touches the machine's own sshd or ~/.ssh.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
// @ts-expect-error plain .mjs helper shared with the command line
import { aptGetInstall } from '../../scripts/test-prerequisites.mjs';

export type KeyType = 'ed25519' | 'rsa' | 'ecdsa';

export interface SshdOptions {
  hostKeyType?: KeyType;
  /** Passphrase for the generated user key (empty: unencrypted). */
  userKeyPassphrase?: string;
  userKeyType?: KeyType;
  /** Offer the SFTP subsystem (default true); false configures sshd without a `Subsystem sftp` line. */
  sftp?: boolean;
}

export interface Sshd {
  port: number;
  dir: string;
  user: string;
  /** The user's private key file (authorized on this server). */
  userKey: string;
  /** `ssh-ed25519 AAAA...` of the host key. */
  hostKeyLine: string;
  /** `SHA256:...` of the host key, as OpenSSH prints it. */
  hostKeyFingerprint: string;
  /** A known_hosts file that trusts this server as `[127.0.0.1]:port`. */
  knownHosts: string;
  /** The python3 whose folder leads the session's PATH (it has numpy). */
  python: string;
  log(): string;
  /** Stops the server and every session it serves (as a host that goes away would). */
  crash(): void;
  /** Starts the listener again on the same port with the same keys. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function sshKeygen(args: string[]): void {
  execFileSync('ssh-keygen', ['-q', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function fingerprintOfLine(line: string): string {
  const blob = Buffer.from(line.trim().split(/\s+/)[1], 'base64');
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The real interpreter (not a pyenv shim) of a python3 that can import numpy: python3 on PATH first, as a
 * non-interactive SSH session on this machine finds it (its shell's rc files put pyenv's shims first, whatever the
 * server's SetEnv says), then the one npm test names (Debian's, with torch), then Debian's. */
export function pythonWithNumpy(): string {
  for (const py of ['python3', process.env.KERNELEVOLVE_PYTHON, '/usr/bin/python3'].filter(Boolean) as string[]) {
    const r = spawnSync(py, ['-c', 'import sys, numpy; print(sys.executable)'], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  throw new Error(`No python3 with numpy found: install python3-numpy (${aptGetInstall(['python3-numpy'])}).`);
}

function keygenType(t: KeyType): string[] {
  return t === 'rsa' ? ['-t', 'rsa', '-b', '2048'] : t === 'ecdsa' ? ['-t', 'ecdsa', '-b', '256'] : ['-t', 'ed25519'];
}

/** Pids of every descendant of `root` (from /proc), deepest last. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startSshd(opts: SshdOptions = {}): Promise<Sshd> {
  if (!fs.existsSync('/usr/sbin/sshd')) {
    throw new Error(`/usr/sbin/sshd is missing: install openssh-server (${aptGetInstall(['openssh-server'])}).`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-sshd-'));
  fs.chmodSync(dir, 0o700);
  const hostKey = path.join(dir, 'host_key');
  const userKey = path.join(dir, 'id_user');
  sshKeygen([...keygenType(opts.hostKeyType ?? 'ed25519'), '-N', '', '-f', hostKey]);
  sshKeygen([...keygenType(opts.userKeyType ?? 'ed25519'), '-N', opts.userKeyPassphrase ?? '', '-f', userKey, '-C', 'kernelevolve-test']);
  fs.copyFileSync(`${userKey}.pub`, path.join(dir, 'authorized_keys'));
  const port = await freePort();
  const python = pythonWithNumpy();
  const user = os.userInfo().username;
  const pathEnv = [path.dirname(python), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
  const config = path.join(dir, 'sshd_config');
  const pidFile = path.join(dir, 'sshd.pid');
  const logFile = path.join(dir, 'sshd.log');
  fs.writeFileSync(config, [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${hostKey}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'StrictModes no',
    `PidFile ${pidFile}`,
    'AllowTcpForwarding yes',
    ...(opts.sftp === false ? [] : ['Subsystem sftp internal-sftp']),
    'MaxSessions 20',
    'LogLevel VERBOSE',
    `SetEnv PATH=${pathEnv}`,
    '',
  ].join('\n'));
  try {
    fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation folder, needed as root
  } catch {
    // not root: sshd runs unprivileged and does without it
  }
  const hostKeyLine = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const knownHosts = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKeyLine}\n`);

  let pid = 0;
  const launch = async () => {
    fs.rmSync(pidFile, { force: true });
    const child = spawn('/usr/sbin/sshd', ['-D', '-f', config, '-E', logFile], { stdio: 'ignore', detached: true });
    child.unref();
    pid = child.pid!;
    await waitFor(`sshd on port ${port} (log: ${logFile})`, () => fs.existsSync(pidFile) || !alive(pid));
    if (!alive(pid)) throw new Error(`sshd exited at once; its log says:\n${fs.readFileSync(logFile, 'utf8')}`);
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(port))) {
      if (Date.now() > deadline) throw new Error(`sshd is not accepting on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await launch();

  const killTree = (signal: NodeJS.Signals, onlySshd: boolean) => {
    const victims = [pid, ...descendants(pid)].filter((p) => !onlySshd || comm(p) === 'sshd');
    for (const p of victims) {
      try {
        process.kill(p, signal);
      } catch {
        // gone already
      }
    }
  };

  return {
    port,
    dir,
    user,
    userKey,
    hostKeyLine,
    hostKeyFingerprint: fingerprintOfLine(hostKeyLine),
    knownHosts,
    python,
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''),
    crash: () => {
      // Only the sshd processes die, as when a machine drops off the network: what they ran must notice.
      killTree('SIGKILL', true);
    },
    restart: async () => {
      await waitFor('the old sshd to exit', () => !alive(pid));
      await launch();
    },
    stop: async () => {
      killTree('SIGTERM', false);
      await waitFor('sshd to stop', () => !alive(pid)).catch(() => killTree('SIGKILL', false));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
