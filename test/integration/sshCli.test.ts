// The `kernelevolve` CLI with SSH hosts, against a real OpenSSH server on 127.0.0.1: `hosts --check`,
// unknown and mismatched host keys, a ~/.ssh/config alias reached through ProxyJump, and evaluate and
// evolve giving the same verdicts over SSH as on this machine.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/engine/spec';
import { LocalHost } from '../../src/remote/localHost';
import { bundleCli, runCli } from '../support/sshCli';
import { fingerprintOfLine, startSshd } from '../support/sshd';
import type { Sshd } from '../support/sshd';

const root = path.resolve(__dirname, '..', '..');
const fixtures = path.join(__dirname, 'sshFixtures');
let sshd: Sshd;
let cli: string;
let home: string;
let work: string;

function sshHostEntry(name: string, extra: Record<string, unknown> = {}) {
  return { name, type: 'ssh', host: '127.0.0.1', port: sshd.port, user: sshd.user, identityFile: sshd.userKey,
    knownHostsFile: sshd.knownHosts, workdir: path.join(work, 'remote'), slots: 2, ...extra };
}

function writeConfig(name: string, hosts: unknown[]): string {
  const file = path.join(work, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ hosts }));
  return file;
}

/** The CLI with HOME pointing at a folder of our own, so ~/.ssh is the test's, not the machine's. */
const env = () => ({ HOME: home, SSH_AUTH_SOCK: '', KERNELEVOLVE_ACCEPT_NEW_HOST_KEY: '', KERNELEVOLVE_SSH_PASSPHRASE: '' });

beforeAll(async () => {
  [sshd, cli] = await Promise.all([startSshd(), bundleCli()]);
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-home-'));
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-cli-work-'));
  fs.mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
});
afterAll(async () => {
  await sshd?.stop();
  for (const d of [home, work, cli && path.dirname(cli)]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

describe('kernelevolve hosts', () => {
  it('lists the hosts of a config', async () => {
    const config = writeConfig('list', [{ name: 'local', type: 'local' }, sshHostEntry('loop', { devices: [0, 1], hardware: 'cpu-x86' })]);
    const r = await runCli(cli, ['hosts', '--config', config], env());
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^name\s+type\s+where\s+slots\s+devices\s+hardware$/);
    expect(lines[2]).toMatch(new RegExp(`^loop\\s+ssh\\s+${sshd.user}@127\\.0\\.0\\.1:${sshd.port}\\s+2\\s+0,1\\s+cpu-x86$`));
  });

  it('--check refuses an unknown host key without --accept-new-host-key, records it with the flag', async () => {
    const kh = path.join(work, 'known_hosts_fresh');
    fs.writeFileSync(kh, '');
    const config = writeConfig('fresh', [sshHostEntry('loop', { knownHostsFile: kh })]);

    const refused = await runCli(cli, ['hosts', '--config', config, '--check'], env());
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/^loop\s+NO/m);
    expect(refused.stdout).toContain(sshd.hostKeyFingerprint);
    expect(refused.stdout).toContain('--accept-new-host-key');
    expect(fs.readFileSync(kh, 'utf8')).toBe('');

    const accepted = await runCli(cli, ['hosts', '--config', config, '--check', '--accept-new-host-key'], env());
    expect(accepted.code).toBe(0);
    expect(accepted.stderr).toContain(sshd.hostKeyFingerprint);
    const header = accepted.stdout.split('\n')[0];
    expect(header).toMatch(/^host\s+reachable\s+python\s+numpy\s+g\+\+\s+nvcc\s+gpu\s+torch\s+triton$/);
    const python = execFileSync(sshd.python, ['-c', 'import platform; print(platform.python_version())'], { encoding: 'utf8' }).trim();
    expect(accepted.stdout).toMatch(new RegExp(`^loop\\s+yes\\s+${python.replace(/\./g, '\\.')}\\s`, 'm'));
    expect(execFileSync('ssh-keygen', ['-F', `[127.0.0.1]:${sshd.port}`, '-f', kh], { encoding: 'utf8' })).toContain(sshd.hostKeyLine.split(' ')[1]);

    const later = await runCli(cli, ['hosts', '--config', config, '--check'], env());
    expect(later.code).toBe(0);
  });
});

describe('kernelevolve with an encrypted key', () => {
  it('unlocks it with KERNELEVOLVE_SSH_PASSPHRASE, and without a passphrase says which keys were refused', async () => {
    const locked = await startSshd({ userKeyPassphrase: 'open sesame' });
    try {
      const config = writeConfig('locked', [{ name: 'locked', type: 'ssh', host: '127.0.0.1', port: locked.port, user: locked.user,
        identityFile: locked.userKey, knownHostsFile: locked.knownHosts }]);
      const ok = await runCli(cli, ['hosts', '--config', config, '--check'], { ...env(), KERNELEVOLVE_SSH_PASSPHRASE: 'open sesame' });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^locked\s+yes/m);
      // No passphrase and no terminal: the key is skipped and the message names it.
      const refused = await runCli(cli, ['hosts', '--config', config, '--check'], env());
      expect(refused.code).toBe(3);
      expect(refused.stdout).toContain(`accepted none of the keys offered (${locked.userKey}`);
      expect(refused.stdout).toContain('identityFile');
    } finally {
      await locked.stop();
    }
  });
});

describe('kernelevolve evaluate over SSH', () => {
  it('refuses a mismatched host key with both fingerprints, and runs nothing', async () => {
    const other = path.join(work, 'impostor');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const otherLine = fs.readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
    const kh = path.join(work, 'known_hosts_wrong');
    fs.writeFileSync(kh, `[127.0.0.1]:${sshd.port} ${otherLine}\n`);
    const config = writeConfig('wrong', [sshHostEntry('loop', { knownHostsFile: kh, workdir: path.join(work, 'never') })]);
    const r = await runCli(cli, ['evaluate', '--spec', path.join(fixtures, 'spec.py'), '--candidate', path.join(fixtures, 'scale.cpp'),
      '--config', config, '--host', 'loop', '--accept-new-host-key'], env());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('HOST KEY MISMATCH');
    expect(r.stderr).toContain(fingerprintOfLine(otherLine));
    expect(r.stderr).toContain(sshd.hostKeyFingerprint);
    expect(fs.existsSync(path.join(work, 'never'))).toBe(false);
  });

  it('reaches a ~/.ssh/config alias through ProxyJump and gives the verdicts the local host gives', async () => {
    fs.writeFileSync(path.join(home, '.ssh', 'config'), [
      'Host jump',
      '  HostName 127.0.0.1',
      `  Port ${sshd.port}`,
      'Host gpu-box',
      '  HostName 127.0.0.1',
      `  Port ${sshd.port}`,
      '  ProxyJump jump',
      'Host *',
      `  User ${sshd.user}`,
      `  IdentityFile ${sshd.userKey}`,
      '',
    ].join('\n'));
    fs.copyFileSync(sshd.knownHosts, path.join(home, '.ssh', 'known_hosts'));
    const config = writeConfig('alias', [{ name: 'box', type: 'ssh', host: 'gpu-box', workdir: path.join(work, 'remote') }]);
    const before = (sshd.log().match(/Accepted publickey/g) ?? []).length;
    const local = new LocalHost({ python: sshd.python });
    const cases: [string, string][] = ['scale.cpp', 'wrong.cpp', 'broken.cpp'].map((c) => [path.join(fixtures, 'spec.py'), path.join(fixtures, c)]);
    for (const ex of ['matmul_blocked', 'softmax_rows']) {
      const dir = path.join(root, 'examples/cpp', ex);
      if (!fs.existsSync(path.join(dir, 'candidates'))) continue;
      for (const c of fs.readdirSync(path.join(dir, 'candidates'))) cases.push([path.join(dir, 'spec.py'), path.join(dir, 'candidates', c)]);
    }
    expect(cases.length).toBeGreaterThan(3);
    for (const [spec, cand] of cases) {
      const r = await runCli(cli, ['evaluate', '--spec', spec, '--candidate', cand, '--config', config, '--host', 'box', '--json'], env());
      expect(r.stderr).not.toContain('unexpected error');
      const viaSsh = JSON.parse(r.stdout.trim()) as { status: string; host: string };
      const s = await loadSpec(spec);
      const here = await local.evaluate({ id: 'local', specPath: s.specPath, baselinePath: s.sourcePath,
        candidateSource: fs.readFileSync(cand, 'utf8'), candidateFileName: path.basename(cand) });
      expect(`${path.basename(cand)}: ${viaSsh.status}`).toBe(`${path.basename(cand)}: ${here.status}`);
      expect(viaSsh.host).toBe('box');
      expect(r.code).toBe(here.status === 'ok' ? 0 : 1);
    }
    // Each CLI run logs in twice: the jump host, then the target through it.
    expect((sshd.log().match(/Accepted publickey/g) ?? []).length - before).toBe(2 * cases.length);
  });
});

/** Whether some process runs with its working folder under `dir` (a harness on the SSH host). */
function busyUnder(dir: string): boolean {
  return fs.readdirSync('/proc').some((p) => {
    try {
      return /^\d+$/.test(p) && fs.readlinkSync(`/proc/${p}/cwd`).startsWith(dir);
    } catch {
      return false;
    }
  });
}

describe('kernelevolve evolve over SSH', () => {
  it('loses no candidate when the server is killed mid-run and comes back', async () => {
    const remote = path.join(work, 'remote-crash');
    const config = writeConfig('evolve-crash', [sshHostEntry('loop', { workdir: remote })]);
    const out = path.join(work, 'run-crash');
    const running = runCli(cli, ['evolve', '--spec', path.join(root, 'examples/cpp/matmul_blocked/spec.py'), '--operators', 'tune',
      '--budget', '5', '--seed', '2', '--config', config, '--host', 'loop', '--json', '--out', out], env());
    const deadline = Date.now() + 60_000;
    while (!busyUnder(path.join(remote, 'jobs')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(busyUnder(path.join(remote, 'jobs'))).toBe(true);
    sshd.crash();
    await new Promise((r) => setTimeout(r, 1500));
    await sshd.restart();
    const r = await running;
    expect(r.stderr).toMatch(/host loop failed \(.*\); its job goes back to the queue/);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.trim()) as { candidates: number };
    const judged = new Set(fs.readFileSync(path.join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id));
    const proposed = fs.readdirSync(path.join(out, 'candidates')).filter((f) => f.endsWith('.cpp')).map((f) => f.replace(/\.cpp$/, ''));
    expect(proposed.length).toBe(summary.candidates);
    expect(proposed.filter((id) => !judged.has(id))).toEqual([]);
  });

  it('stops at once on a mismatched host key instead of retrying the host', async () => {
    const other = path.join(work, 'impostor2');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const kh = path.join(work, 'known_hosts_wrong2');
    fs.writeFileSync(kh, `[127.0.0.1]:${sshd.port} ${fs.readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')}\n`);
    const config = writeConfig('evolve-wrong', [sshHostEntry('loop', { knownHostsFile: kh })]);
    const started = Date.now();
    const r = await runCli(cli, ['evolve', '--spec', path.join(fixtures, 'spec.py'), '--operators', 'tune', '--budget', '3',
      '--config', config, '--host', 'loop', '--out', path.join(work, 'run-wrong')], env(), 120_000);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('HOST KEY MISMATCH');
    expect(r.stderr).toContain(sshd.hostKeyFingerprint);
  });

  it('runs the search on the SSH host, and every candidate gets the verdict the local host gives it', async () => {
    const config = writeConfig('evolve', [sshHostEntry('loop')]);
    const out = path.join(work, 'run-ssh');
    const spec = path.join(root, 'examples/cpp/matmul_blocked/spec.py');
    const r = await runCli(cli, ['evolve', '--spec', spec, '--operators', 'tune', '--budget', '6', '--seed', '1', '--config', config,
      '--host', 'loop', '--json', '--out', out], env());
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.trim()) as { candidates: number; best: { status: string } };
    expect(summary.candidates).toBeGreaterThanOrEqual(6);
    const all = fs.readFileSync(path.join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as
      { id: string; verdict?: { status: string }; placement?: { host: string }; confirmation?: { host?: string } });
    // The leaders' confirmations (judged once more before the run ends) ran on the SSH host too.
    expect(all.filter((l) => l.confirmation).every((l) => l.confirmation?.host === 'loop')).toBe(true);
    const lines = all.filter((l): l is typeof l & { verdict: { status: string } } => !!l.verdict);
    expect(lines.every((l) => l.placement?.host === 'loop')).toBe(true);
    const s = await loadSpec(spec);
    const local = new LocalHost({ python: sshd.python });
    const statuses = new Set<string>();
    for (const l of lines) {
      const file = fs.readdirSync(path.join(out, 'candidates')).find((f) => f.startsWith(`${l.id}.`) && !f.endsWith('.json'))!;
      const here = await local.evaluate({ id: l.id, specPath: s.specPath, baselinePath: s.sourcePath,
        candidateSource: fs.readFileSync(path.join(out, 'candidates', file), 'utf8'), candidateFileName: file });
      expect(`${l.id}: ${l.verdict.status}`).toBe(`${l.id}: ${here.status}`);
      statuses.add(here.status);
    }
    expect(statuses.has('ok')).toBe(true);
  });
});
