// The SSH connection against a real OpenSSH server on 127.0.0.1: host keys (trusted, hashed, mismatched,
// unknown), ProxyJump through ~/.ssh/config, encrypted keys, reconnection, and the host agent's process groups.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/remote/knownHosts';
import { harnessBundle } from '../../src/remote/fileBundle';
import { harnessDir } from '../../src/remote/harnessLocation';
import { AGENT_MODULE, AgentSession } from '../../src/remote/remoteAgent';
import { uploadBundle } from '../../src/remote/sftpUpload';
import { resolveSshTarget } from '../../src/remote/sshConfigFile';
import { HostKeyError, SshAuthError, SshConnection } from '../../src/remote/sshConnection';
import type { SshConnectionOptions } from '../../src/remote/sshConnection';
import { HostUnavailableError } from '../../src/remote/host';
import { fingerprintOfLine, startSshd } from '../support/sshd';
import type { Sshd } from '../support/sshd';

let sshd: Sshd;

function writeConfig(name: string, body: string): string {
  const file = path.join(sshd.dir, name);
  fs.writeFileSync(file, body);
  return file;
}

async function connectionTo(alias: string, configBody: string, opts: Partial<SshConnectionOptions> = {}): Promise<SshConnection> {
  const cfg = writeConfig(`config-${alias}`, configBody);
  const target = await resolveSshTarget(alias, {}, cfg);
  return new SshConnection({ name: alias, target, connectAttempts: 2, backoffMs: 100, ...opts });
}

function hostBlock(alias: string, knownHosts: string, extra = ''): string {
  return `Host ${alias}\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  User ${sshd.user}\n  IdentityFile ${sshd.userKey}\n` +
    `  UserKnownHostsFile ${knownHosts}\n  GlobalKnownHostsFile none\n  IdentityAgent none\n${extra}`;
}

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(async () => {
  await sshd?.stop();
});

describe('host keys', () => {
  it('connects when known_hosts holds the key, and reuses the connection', async () => {
    const conn = await connectionTo('trusted', hostBlock('trusted', sshd.knownHosts));
    try {
      const a = await conn.run('echo $PPID');
      const b = await conn.run('echo $PPID');
      expect(a.code).toBe(0);
      // Both commands were children of the same sshd session process: one handshake, two channels.
      expect(a.stdout.trim()).toBe(b.stdout.trim());
    } finally {
      await conn.close();
    }
  });

  it('accepts a hashed known_hosts entry', async () => {
    const hashed = path.join(sshd.dir, 'known_hosts_hashed');
    fs.copyFileSync(sshd.knownHosts, hashed);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', hashed], { stdio: 'ignore' });
    expect(fs.readFileSync(hashed, 'utf8')).toMatch(/^\|1\|/);
    const conn = await connectionTo('hashed', hostBlock('hashed', hashed));
    try {
      expect((await conn.run('echo ok')).stdout.trim()).toBe('ok');
    } finally {
      await conn.close();
    }
  });

  it('refuses a mismatched key, naming both fingerprints and what to do', async () => {
    const otherKey = path.join(sshd.dir, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey]);
    const otherLine = fs.readFileSync(`${otherKey}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
    const kh = path.join(sshd.dir, 'known_hosts_wrong');
    fs.writeFileSync(kh, `[127.0.0.1]:${sshd.port} ${otherLine}\n`);
    let asked = false;
    const conn = await connectionTo('wrong', hostBlock('wrong', kh), { onUnknownHostKey: async () => (asked = true) });
    const err = await conn.run('echo should-not-run').then(() => undefined, (e: Error) => e);
    await conn.close();
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err!.message).toContain(fingerprintOfLine(otherLine)); // what known_hosts expects
    expect(err!.message).toContain(sshd.hostKeyFingerprint); // what the server offered
    expect(err!.message).toContain('ssh-keygen -R');
    expect(asked).toBe(false); // a mismatch is never put to the user
    expect(fs.readFileSync(kh, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${otherLine}\n`);
  });

  it('refuses an unknown key unless the callback accepts it, then records it', async () => {
    const kh = path.join(sshd.dir, 'known_hosts_empty');
    fs.writeFileSync(kh, '');
    const refused = await connectionTo('unknown1', hostBlock('unknown1', kh));
    const err = await refused.run('true').then(() => undefined, (e: Error) => e);
    await refused.close();
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err!.message).toContain(sshd.hostKeyFingerprint);
    expect(err!.message).toContain('--accept-new-host-key');
    expect(fs.readFileSync(kh, 'utf8')).toBe('');

    const offered: string[] = [];
    const accepted = await connectionTo('unknown2', hostBlock('unknown2', kh), {
      onUnknownHostKey: async (_h, fp) => {
        offered.push(fp);
        return true;
      },
    });
    expect((await accepted.run('echo in')).stdout.trim()).toBe('in');
    await accepted.close();
    expect(offered).toEqual([`ssh-ed25519 ${sshd.hostKeyFingerprint}`]);
    const found = execFileSync('ssh-keygen', ['-F', `[127.0.0.1]:${sshd.port}`, '-f', kh], { encoding: 'utf8' });
    expect(found).toContain(sshd.hostKeyLine.split(' ')[1]);

    // Now known: no question asked.
    const again = await connectionTo('unknown3', hostBlock('unknown3', kh), { onUnknownHostKey: async () => false });
    expect((await again.run('echo known')).stdout.trim()).toBe('known');
    await again.close();
  });
});

describe('~/.ssh/config', () => {
  it('reaches an alias through ProxyJump (a second SSH session over forwardOut)', async () => {
    const accepted = () => (sshd.log().match(/Accepted publickey/g) ?? []).length;
    const before = accepted();
    const body = hostBlock('jumpbox', sshd.knownHosts) + hostBlock('behind-jump', sshd.knownHosts, '  ProxyJump jumpbox\n');
    const conn = await connectionTo('behind-jump', body);
    try {
      expect((await conn.run('echo through')).stdout.trim()).toBe('through');
      expect(accepted() - before).toBe(2); // the jump host, then the target through it
      expect(conn.options.target.jumps.map((j) => j.alias)).toEqual(['jumpbox']);
    } finally {
      await conn.close();
    }
  });
});

describe('ProxyCommand', () => {
  it('carries the connection over the stdin/stdout of the command', async () => {
    const accepted = () => (sshd.log().match(/Accepted publickey/g) ?? []).length;
    const before = accepted();
    // OpenSSH's own client as the proxy: `ssh -W` to the same server, so two logins show it was used.
    const proxy = `ssh -q -p ${sshd.port} -i ${sshd.userKey} -o UserKnownHostsFile=${sshd.knownHosts} -o StrictHostKeyChecking=yes ` +
      `-o BatchMode=yes -W %h:%p ${sshd.user}@127.0.0.1`;
    const conn = await connectionTo('via-command', hostBlock('via-command', sshd.knownHosts, `  ProxyCommand ${proxy}\n`));
    try {
      expect((await conn.run('echo proxied')).stdout.trim()).toBe('proxied');
      expect(accepted() - before).toBe(2);
    } finally {
      await conn.close();
    }
  });
});

describe('keys', () => {
  it('unlocks an encrypted key through the passphrase callback, once per session', async () => {
    const locked = await startSshd({ userKeyPassphrase: 'correct horse' });
    try {
      const cfg = `Host locked\n  HostName 127.0.0.1\n  Port ${locked.port}\n  User ${locked.user}\n  IdentityFile ${locked.userKey}\n` +
        `  UserKnownHostsFile ${locked.knownHosts}\n  IdentityAgent none\n`;
      const file = path.join(locked.dir, 'config');
      fs.writeFileSync(file, cfg);
      const target = await resolveSshTarget('locked', {}, file);
      const asked: string[] = [];
      const conn = new SshConnection({ name: 'locked', target, askPassphrase: async (f) => {
        asked.push(f);
        return 'correct horse';
      } });
      expect((await conn.run('echo unlocked')).stdout.trim()).toBe('unlocked');
      await conn.close();
      expect(asked).toEqual([locked.userKey]);

      const wrong = new SshConnection({ name: 'locked', target, askPassphrase: async () => 'wrong' });
      const err = await wrong.run('true').then(() => undefined, (e: Error) => e);
      await wrong.close();
      expect(err).toBeInstanceOf(SshAuthError);
      expect(err!.message).toMatch(/passphrase for .*id_user is wrong/);
    } finally {
      await locked.stop();
    }
  });
});

describe('ssh-agent', () => {
  it('signs with the agent first, so an encrypted key file the agent holds is never asked for', async () => {
    const locked = await startSshd({ userKeyPassphrase: 'agent holds it' });
    const sock = path.join(locked.dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 5000;
      while (!fs.existsSync(sock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // The agent gets a decrypted copy, as `ssh-add` after typing the passphrase would leave it.
      const copy = path.join(locked.dir, 'id_copy');
      fs.copyFileSync(locked.userKey, copy);
      fs.chmodSync(copy, 0o600);
      execFileSync('ssh-keygen', ['-q', '-p', '-P', 'agent holds it', '-N', '', '-f', copy]);
      execFileSync('ssh-add', ['-q', copy], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
      const file = path.join(locked.dir, 'config-agent');
      fs.writeFileSync(file, `Host via-agent\n  HostName 127.0.0.1\n  Port ${locked.port}\n  User ${locked.user}\n` +
        `  IdentityFile ${locked.userKey}\n  IdentityAgent ${sock}\n  UserKnownHostsFile ${locked.knownHosts}\n`);
      const target = await resolveSshTarget('via-agent', {}, file);
      expect(target.agent).toBe(sock);
      const asked: string[] = [];
      const conn = new SshConnection({ name: 'via-agent', target, askPassphrase: async (f) => {
        asked.push(f);
        return undefined;
      } });
      expect((await conn.run('echo signed')).stdout.trim()).toBe('signed');
      await conn.close();
      expect(asked).toEqual([]);
    } finally {
      agent.kill();
      await locked.stop();
    }
  });
});

describe('reconnection', () => {
  it('fails in-flight work with HostUnavailableError when the server dies, then reconnects with backoff', async () => {
    const conn = await connectionTo('flaky', hostBlock('flaky', sshd.knownHosts), { connectAttempts: 8, backoffMs: 100 });
    try {
      expect((await conn.run('echo first')).stdout.trim()).toBe('first');
      const inFlight = conn.run('sleep 30; echo late', undefined, 60_000);
      await new Promise((r) => setTimeout(r, 300));
      sshd.crash();
      const err = await inFlight.then(() => undefined, (e: Error) => e);
      expect(err).toBeInstanceOf(HostUnavailableError);
      const restarted = (async () => {
        await new Promise((r) => setTimeout(r, 700));
        await sshd.restart();
      })();
      // Tried while the server is still down: the backoff carries it over the restart.
      expect((await conn.run('echo second')).stdout.trim()).toBe('second');
      await restarted;
    } finally {
      await conn.close();
    }
  });
});

/** Processes whose working folder or command line lies under `dir` (the agent's jobs and what they started). */
function processesUnder(dir: string): string[] {
  return fs.readdirSync('/proc').filter((p) => {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) return false;
    try {
      return fs.readlinkSync(`/proc/${p}/cwd`).startsWith(dir) || fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
    } catch {
      return false;
    }
  });
}

/** Whether a process under `dir` has loaded a library built under `dir`: the candidate's worker (forked by the warm
 * server, it runs in the judge's folder inside the job's), now inside the candidate's first call, which never returns.
 * Counting processes alone is not enough: the compiler is one for a moment, before the worker exists. */
function candidateLoadedUnder(dir: string): boolean {
  return processesUnder(dir).some((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/maps`, 'utf8').split('\n').some((l) => l.includes(dir) && l.endsWith('.so'));
    } catch {
      return false;
    }
  });
}

describe('host agent', () => {
  it('stops a job with its whole process tree on timeout, on request, and when its connection closes', async () => {
    const conn = await connectionTo('agent', hostBlock('agent', sshd.knownHosts));
    const work = `${sshd.dir}/agent-work`;
    const jobs = `${work}/jobs`;
    await conn.run(`mkdir -p ${jobs}`);
    await uploadBundle(conn, await harnessBundle(harnessDir()), `${work}/harness`);
    const start = async () => {
      const agent = new AgentSession(await conn.exec(`cd ${work} && PYTHONPATH=${work}/harness && export PYTHONPATH && exec python3 -u -m ${AGENT_MODULE}`), () => new Error('agent closed'));
      await agent.ready;
      return agent;
    };
    const fixtures = path.join(__dirname, 'sshFixtures');
    // A candidate that never returns from its first call: the judge, its compiler and its worker are all running.
    const hang = (timeoutS?: number) => ({ spec: path.join(fixtures, 'spec.py'), candidate_name: 'hang.cpp',
      candidate_source: fs.readFileSync(path.join(fixtures, 'hang.cpp'), 'utf8'), ...(timeoutS ? { timeout_s: timeoutS } : {}) });
    try {
      const agent = await start();
      const timedOut = await agent.run({ id: 'a', dir: 'jobs/a', job: hang(4) }) as { outcome: string; verdict: { status: string } };
      expect(timedOut.outcome).toBe('verdict');
      expect(timedOut.verdict.status).toBe('timeout');
      // The judge's tree is stopped before the agent answers; its worker, forked by the warm server, goes when the
      // server sees the judge's connection close, a moment later.
      await until(() => processesUnder(jobs).length === 0, 5_000);
      expect(processesUnder(jobs)).toEqual([]);
      await until(() => !fs.existsSync(`${jobs}/a`));
      expect(fs.existsSync(`${jobs}/a`)).toBe(false);

      let started = false;
      const killed = agent.run({ id: 'b', dir: 'jobs/b', job: hang() }, () => (started = true));
      await until(() => started && candidateLoadedUnder(`${jobs}/b`), 60_000);
      expect(processesUnder(`${jobs}/b`).length).toBeGreaterThanOrEqual(2);
      agent.kill('b');
      expect(await killed).toMatchObject({ outcome: 'cancelled' });
      await until(() => processesUnder(jobs).length === 0, 5_000);
      expect(processesUnder(jobs)).toEqual([]);

      // A kill sent right behind its job, before the job's process exists, still takes.
      const early = agent.run({ id: 'd', dir: 'jobs/d', job: hang() });
      agent.kill('d');
      expect(await early).toMatchObject({ outcome: 'cancelled' });
      await until(() => processesUnder(jobs).length === 0, 5_000);
      expect(processesUnder(jobs)).toEqual([]);

      const orphaned = agent.run({ id: 'c', dir: 'jobs/c', job: hang() });
      await until(() => candidateLoadedUnder(`${jobs}/c`), 60_000);
      expect(candidateLoadedUnder(`${jobs}/c`)).toBe(true);
      expect(processesUnder(`${jobs}/c`).length).toBeGreaterThanOrEqual(2);
      agent.close();
      await orphaned.catch(() => undefined);
      await until(() => processesUnder(jobs).length === 0 && !fs.existsSync(`${jobs}/c`), 20_000);
      expect(processesUnder(jobs)).toEqual([]);
      expect(fs.existsSync(`${jobs}/c`)).toBe(false);
    } finally {
      await conn.close();
    }
  }, 180_000);
});

it('fingerprints match ssh-keygen', () => {
  expect(fingerprint(Buffer.from(sshd.hostKeyLine.split(' ')[1], 'base64'))).toBe(sshd.hostKeyFingerprint);
});
