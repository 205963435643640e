// The ssh host against a real OpenSSH server on 127.0.0.1 and the real harness: the same verdicts as the
// local host, one connection and one harness upload for many jobs, a hanging candidate killed on the host,
// and a server killed mid-run losing no candidate (the host pool requeues, the host reconnects).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/engine/spec';
import type { EvaluationJob } from '../../src/contract/job';
import { HostUnavailableError } from '../../src/remote/host';
import type { SshHostConfig } from '../../src/remote/hostConfig';
import { HostPool } from '../../src/remote/hostPool';
import { LocalHost } from '../../src/remote/localHost';
import { HostSetupError, SshHost } from '../../src/remote/sshHost';
import { startSshd } from '../support/sshd';
import type { Sshd } from '../support/sshd';

const fixtures = path.join(__dirname, 'sshFixtures');
const root = path.resolve(__dirname, '..', '..');
let sshd: Sshd;
let workdir: string;

function hostConfig(extra: Partial<SshHostConfig> = {}): SshHostConfig {
  return {
    name: 'loopback', type: 'ssh', host: '127.0.0.1', port: sshd.port, user: sshd.user, identityFile: sshd.userKey,
    knownHostsFile: sshd.knownHosts, workdir, slots: 2, ...extra,
  };
}

function sshHost(extra: Partial<SshHostConfig> = {}): SshHost {
  // An ssh_config that does not exist: the tests must not depend on the machine's ~/.ssh/config.
  return new SshHost(hostConfig(extra), { sshConfigFile: path.join(sshd.dir, 'no-config'), connectAttempts: 3, backoffMs: 200 });
}

async function job(specPath: string, candidatePath: string, id: string, timeoutS?: number): Promise<EvaluationJob> {
  const spec = await loadSpec(specPath);
  return {
    id, specPath: spec.specPath, baselinePath: spec.sourcePath, candidateSource: fs.readFileSync(candidatePath, 'utf8'),
    candidateFileName: path.basename(candidatePath), timeoutS,
  };
}

/** Processes whose command line or working folder lies under the host's workdir (the harness and its workers). */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      if ((cwd.startsWith(path.join(dir, 'jobs')) || cmd.includes(path.join(dir, 'jobs'))) && !cmd.includes(AGENT_MARK)) found.push(`${entry}: ${cmd}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
const AGENT_MARK = 'kernelevolve_harness.host_agent';

async function waitUntilNone(dir: string, ms = 5000): Promise<string[]> {
  const end = Date.now() + ms;
  let left = processesUnder(dir);
  while (left.length && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesUnder(dir);
  }
  return left;
}

/**
 * The processes of running jobs under the host's workdir, once the host's session is up. Only then: the
 * session's setup command names the jobs folder too and ends within milliseconds, so a server crashed on
 * seeing it meets no job, and a second look finds nothing. One look decides, and is what the caller checks.
 */
async function jobsRunningUnder(dir: string, sessionUp: () => boolean, ms = 20_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = sessionUp() ? processesUnder(dir) : [];
    if (found.length || Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  sshd = await startSshd();
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-ssh-work-'));
});
afterAll(async () => {
  await sshd?.stop();
  fs.rmSync(workdir, { recursive: true, force: true });
});

describe('ssh host', () => {
  it('gives the same verdict status as the local host, over one connection and one harness upload', async () => {
    const spec = path.join(fixtures, 'spec.py');
    const cases = ['scale.cpp', 'wrong.cpp', 'broken.cpp'].map((c) => [spec, path.join(fixtures, c)] as const);
    for (const dir of fs.existsSync(path.join(root, 'examples/cpp')) ? fs.readdirSync(path.join(root, 'examples/cpp')) : []) {
      const exSpec = path.join(root, 'examples/cpp', dir, 'spec.py');
      if (fs.existsSync(exSpec)) cases.push([exSpec, (await loadSpec(exSpec)).sourcePath]);
    }
    const before = (sshd.log().match(/Accepted publickey/g) ?? []).length;
    const remote = sshHost();
    const local = new LocalHost({ python: sshd.python });
    try {
      for (const [i, [specPath, cand]] of cases.entries()) {
        const j = await job(specPath, cand, `same-${i}`);
        const [viaSsh, here] = await Promise.all([remote.evaluate(j), local.evaluate(j)]);
        expect(`${path.basename(path.dirname(specPath))}/${path.basename(cand)}: ${viaSsh.status}`)
          .toBe(`${path.basename(path.dirname(specPath))}/${path.basename(cand)}: ${here.status}`);
        expect(viaSsh.host).toBe('loopback');
        expect(viaSsh.reason.length).toBeGreaterThan(0);
      }
    } finally {
      await remote.dispose();
    }
    // One SSH login for every job, one harness folder on the host, and no job folder left behind.
    expect((sshd.log().match(/Accepted publickey/g) ?? []).length - before).toBe(1);
    const entries = fs.readdirSync(workdir);
    expect(entries.filter((e) => e.startsWith('harness-'))).toHaveLength(1);
    // The agent removes a job's folder just after sending its verdict.
    const end = Date.now() + 5000;
    while (fs.readdirSync(path.join(workdir, 'jobs')).length && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(fs.readdirSync(path.join(workdir, 'jobs'))).toEqual([]);
  });

  it('reports the statuses the harness gives: ok, incorrect, compile_error', async () => {
    const remote = sshHost();
    try {
      const spec = path.join(fixtures, 'spec.py');
      const statuses = await Promise.all(['scale.cpp', 'wrong.cpp', 'broken.cpp'].map(async (c, i) =>
        (await remote.evaluate(await job(spec, path.join(fixtures, c), `st-${i}`))).status));
      expect(statuses).toEqual(['ok', 'incorrect', 'compile_error']);
    } finally {
      await remote.dispose();
    }
  });

  it('maps devices to CUDA_VISIBLE_DEVICES and times under the machine-wide lock of each device', async () => {
    const remote = sshHost({ devices: [3, 5], slots: 2 });
    try {
      const spec = path.join(fixtures, 'devices_spec.py');
      const [a, b] = await Promise.all([0, 1].map(async (i) => remote.evaluate(await job(spec, path.join(fixtures, 'scale.cpp'), `dev-${i}`))));
      expect([a.placement?.device, b.placement?.device].sort()).toEqual(['3', '5']);
      expect(a.status, a.reason).toBe('ok');
      // What the spec saw on the host: each evaluation ran with its own CUDA_VISIBLE_DEVICES.
      const logs = fs.readdirSync(path.join(workdir, 'specs')).map((d) => path.join(workdir, 'specs', d, 'devices.log')).filter((f) => fs.existsSync(f));
      expect(logs).toHaveLength(1);
      expect([...new Set(fs.readFileSync(logs[0], 'utf8').trim().split('\n'))].sort()).toEqual(['3', '5']);
      expect((a.timing as { lock?: boolean } | undefined)?.lock).toBe(true);
      // One lock file per device per machine, named by the harness's job runner whatever the transport.
      expect([a.placement?.lock, b.placement?.lock].sort()).toEqual(['/tmp/kernelevolve-locks/gpu-3.lock', '/tmp/kernelevolve-locks/gpu-5.lock']);
      expect(fs.existsSync('/tmp/kernelevolve-locks/gpu-3.lock') && fs.existsSync('/tmp/kernelevolve-locks/gpu-5.lock')).toBe(true);
    } finally {
      await remote.dispose();
    }
  });

  it('kills a hanging candidate on the host at the timeout, leaving no process behind', async () => {
    const remote = sshHost();
    try {
      const started = Date.now();
      const v = await remote.evaluate(await job(path.join(fixtures, 'spec.py'), path.join(fixtures, 'hang.cpp'), 'hang', 6));
      expect(v.status).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(await waitUntilNone(workdir)).toEqual([]);
    } finally {
      await remote.dispose();
    }
  });

  it('kills the remote process group when the evaluation is cancelled', async () => {
    const remote = sshHost();
    try {
      const controller = new AbortController();
      const running = remote.evaluate(await job(path.join(fixtures, 'spec.py'), path.join(fixtures, 'hang.cpp'), 'cancel'), controller.signal);
      const deadline = Date.now() + 20_000;
      while (!processesUnder(workdir).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(processesUnder(workdir).length).toBeGreaterThan(0);
      controller.abort(new Error('stopped by the user'));
      await expect(running).rejects.toThrow('stopped by the user');
      expect(await waitUntilNone(workdir)).toEqual([]);
    } finally {
      await remote.dispose();
    }
  });

  it('loses no candidate when the server is killed mid-run: jobs are requeued and run after reconnecting', async () => {
    const remote = sshHost({ slots: 2 });
    const news: string[] = [];
    remote.onLog((level, message) => news.push(`${level} ${message}`));
    const failures: string[] = [];
    const pool = new HostPool([remote], { retryDelayMs: 300, onHostFailure: (_h, e) => failures.push(e.message) });
    const spec = path.join(fixtures, 'spec.py');
    const names = ['scale.cpp', 'wrong.cpp', 'broken.cpp', 'scale.cpp', 'wrong.cpp', 'scale.cpp'];
    const expected = { 'scale.cpp': 'ok', 'wrong.cpp': 'incorrect', 'broken.cpp': 'compile_error' } as Record<string, string>;
    try {
      let startedCount = 0;
      const all = Promise.all(names.map(async (n, i) => pool.evaluate(await job(spec, path.join(fixtures, n), `crash-${i}`),
        { onStart: () => startedCount++ })));
      // Kill the server while the first jobs are on it, then bring it back a moment later. The session must be
      // up first: the workdir's setup command names the jobs folder too, and a crash during it is another test.
      const connected = () => news.some((n) => n.startsWith('info loopback: connected to'));
      const running = await jobsRunningUnder(workdir, connected);
      expect(running.length).toBeGreaterThan(0);
      sshd.crash();
      await new Promise((r) => setTimeout(r, 1000));
      await sshd.restart();
      const verdicts = await all;
      expect(verdicts.map((v) => v.status)).toEqual(names.map((n) => expected[n]));
      expect(failures.length).toBeGreaterThan(0);
      expect(failures[0]).toMatch(/dropped|Cannot reach/);
      expect(startedCount).toBeGreaterThan(names.length); // some jobs started twice
      expect(news.filter((n) => n.startsWith('info loopback: connected to'))).toHaveLength(2);
      expect(news.some((n) => n.startsWith('warn loopback: the SSH connection dropped'))).toBe(true);
      expect(await waitUntilNone(workdir)).toEqual([]);
      // The agent cut off by the crash cleared its jobs' folders too.
      const end = Date.now() + 5000;
      while (fs.readdirSync(path.join(workdir, 'jobs')).length && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(fs.readdirSync(path.join(workdir, 'jobs'))).toEqual([]);
    } finally {
      await pool.dispose();
    }
  });

  it('moves the jobs of a host that dies for good to another host', async () => {
    const other = await startSshd();
    const otherWork = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-ssh-work2-'));
    const a = sshHost({ name: 'a', slots: 2 });
    const news: string[] = [];
    a.onLog((level, message) => news.push(`${level} ${message}`));
    const b = new SshHost({ name: 'b', type: 'ssh', host: '127.0.0.1', port: other.port, user: other.user, identityFile: other.userKey,
      knownHostsFile: other.knownHosts, workdir: otherWork, slots: 1 }, { sshConfigFile: path.join(other.dir, 'no-config'), connectAttempts: 2, backoffMs: 100 });
    const pool = new HostPool([a, b], { retryDelayMs: 60_000 });
    const spec = path.join(fixtures, 'spec.py');
    const names = ['scale.cpp', 'wrong.cpp', 'scale.cpp', 'broken.cpp', 'scale.cpp'];
    const expected = { 'scale.cpp': 'ok', 'wrong.cpp': 'incorrect', 'broken.cpp': 'compile_error' } as Record<string, string>;
    const hostsOf = new Map<number, string[]>();
    try {
      const all = Promise.all(names.map(async (n, i) => pool.evaluate(await job(spec, path.join(fixtures, n), `move-${i}`),
        { onStart: (h) => hostsOf.set(i, [...(hostsOf.get(i) ?? []), h]) })));
      // The session must be up first, as in the test above; a crash during its setup is another case.
      const running = await jobsRunningUnder(workdir, () => news.some((n) => n.startsWith('info a: connected to')));
      expect(running.length).toBeGreaterThan(0);
      sshd.crash(); // and it stays down
      const verdicts = await all;
      expect(verdicts.map((v) => v.status)).toEqual(names.map((n) => expected[n]));
      const moved = [...hostsOf.values()].filter((h) => h.length > 1);
      expect(moved.length).toBeGreaterThan(0);
      for (const h of moved) expect(h).toEqual(['a', 'b']);
      expect(verdicts.filter((v) => v.placement?.host === 'a').length + verdicts.filter((v) => v.placement?.host === 'b').length).toBe(names.length);
    } finally {
      await pool.dispose();
      // the server was crashed only if the jobs got that far; a failure before must not be hidden by this
      await sshd.restart().catch(() => undefined);
      await other.stop();
      fs.rmSync(otherWork, { recursive: true, force: true });
    }
  });

  it('says what to change when the host has no such python, without requeueing the job', async () => {
    const remote = sshHost({ python: 'python3-not-installed' });
    try {
      const err = await remote.evaluate(await job(path.join(fixtures, 'spec.py'), path.join(fixtures, 'scale.cpp'), 'nopy'))
        .then(() => undefined, (e: Error) => e);
      expect(err).toBeInstanceOf(HostSetupError);
      expect(err).not.toBeInstanceOf(HostUnavailableError);
      expect(err!.message).toMatch(/could not start `python3-not-installed`: it exited with code 127 saying: .*not found/);
      expect(err!.message).toContain('set "python" for this host');
    } finally {
      await remote.dispose();
    }
  });

  it('says so when the workdir cannot be made, and clears job folders a dropped connection left long ago', async () => {
    const blocked = sshHost({ workdir: path.join(fixtures, 'spec.py', 'under-a-file') });
    const err = await blocked.evaluate(await job(path.join(fixtures, 'spec.py'), path.join(fixtures, 'scale.cpp'), 'nowd'))
      .then(() => undefined, (e: Error) => e);
    await blocked.dispose();
    expect(err).toBeInstanceOf(HostSetupError);
    expect(err!.message).toMatch(/Cannot create the workdir .*under-a-file.*Set "workdir"/s);

    const stale = path.join(workdir, 'jobs', 'c0042-deadbeef');
    const fresh = path.join(workdir, 'jobs', 'c0043-cafef00d');
    for (const d of [stale, fresh]) fs.mkdirSync(d, { recursive: true });
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    fs.utimesSync(stale, twoDaysAgo, twoDaysAgo);
    const remote = sshHost();
    try {
      expect((await remote.evaluate(await job(path.join(fixtures, 'spec.py'), path.join(fixtures, 'scale.cpp'), 'tidy'))).status).toBe('ok');
      expect(fs.existsSync(stale)).toBe(false);
      expect(fs.existsSync(fresh)).toBe(true);
    } finally {
      await remote.dispose();
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('checks a host: reachability, python, compilers, GPU, torch, triton', async () => {
    const remote = sshHost();
    try {
      const c = await remote.check();
      expect(c.reachable).toBe(true);
      const localPython = spawnSync(sshd.python, ['-c', 'import platform; print(platform.python_version())'], { encoding: 'utf8' }).stdout.trim();
      expect(c.facts.python).toBe(localPython);
      expect(c.facts['g++']).toMatch(/g\+\+/);
      for (const k of ['nvcc', 'gpu', 'torch', 'triton']) expect(c.facts[k]).toBeDefined();
    } finally {
      await remote.dispose();
    }
    const down = new SshHost({ ...hostConfig(), port: 1 }, { sshConfigFile: path.join(sshd.dir, 'no-config'), connectAttempts: 1 });
    const c = await down.check();
    await down.dispose();
    expect(c.reachable).toBe(false);
    expect(c.error).toMatch(/Cannot reach loopback/);
  });
});
