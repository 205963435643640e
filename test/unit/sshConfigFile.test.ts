// ~/.ssh/config resolution checked against OpenSSH itself: `ssh -G -F FILE HOST` prints what ssh would use.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProxyJump, resolveSshTarget } from '../../src/remote/sshConfigFile';

let dir: string;
let config: string;

function sshG(host: string): Record<string, string[]> {
  const out = execFileSync('ssh', ['-G', '-F', config, host], { encoding: 'utf8' });
  const map: Record<string, string[]> = {};
  for (const line of out.split('\n')) {
    const [k, ...rest] = line.split(' ');
    if (k) (map[k] ??= []).push(rest.join(' '));
  }
  return map;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-sshcfg-'));
  fs.mkdirSync(path.join(dir, 'conf.d'));
  fs.writeFileSync(path.join(dir, 'conf.d', '10-cluster'), [
    'Host n?? n??.cluster',
    '  HostName %h.cluster.example',
    '  User clusteruser',
    '  ProxyJump login',
    '',
  ].join('\n'));
  config = path.join(dir, 'config');
  fs.writeFileSync(config, [
    `Include ${path.join(dir, 'conf.d')}/*`,
    'Host gpu gpu-alias',
    '  HostName 10.1.2.3',
    '  Port 2222',
    '  User alice',
    `  IdentityFile ${path.join(dir, 'id_gpu')}`,
    'Host login',
    '  HostName login.example',
    '  Port 2200',
    'Host *.internal !secret.internal',
    '  User internal',
    'Host *',
    '  User fallback',
    `  IdentityFile ${path.join(dir, 'id_%r')}`,
    '',
  ].join('\n'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('ssh config resolution', () => {
  it('agrees with ssh -G on HostName, Port, User and IdentityFile of an alias', async () => {
    const t = await resolveSshTarget('gpu-alias', {}, config);
    const g = sshG('gpu-alias');
    expect(t.hostName).toBe(g.hostname[0]);
    expect(String(t.port)).toBe(g.port[0]);
    expect(t.user).toBe(g.user[0]);
    // ssh -G prints identity files before expanding ~ and %-tokens; expand the two this config uses.
    expect(t.identityFiles).toEqual(g.identityfile.map((f) => f.replace(/^~/, os.homedir()).replace('%r', g.user[0])));
    expect(t.identityFiles[1]).toBe(path.join(dir, 'id_alice'));
  });

  it('takes the first value obtained, honours negated patterns, expands %h and %r', async () => {
    const a = await resolveSshTarget('box.internal', {}, config);
    expect(a.user).toBe(sshG('box.internal').user[0]);
    expect(a.user).toBe('internal');
    const s = await resolveSshTarget('secret.internal', {}, config);
    expect(s.user).toBe(sshG('secret.internal').user[0]);
    expect(s.user).toBe('fallback');
    expect(s.identityFiles).toEqual([path.join(dir, 'id_fallback')]);
  });

  it('reads Include files and resolves ProxyJump hops through the config', async () => {
    const t = await resolveSshTarget('n01', {}, config);
    const g = sshG('n01');
    expect(t.hostName).toBe(g.hostname[0]);
    expect(t.hostName).toBe('n01.cluster.example');
    expect(t.user).toBe(g.user[0]);
    expect(g.proxyjump[0]).toBe('login');
    expect(t.jumps.map((j) => `${j.user}@${j.hostName}:${j.port}`)).toEqual([`fallback@login.example:2200`]);
  });

  it('lets the host settings of the KernelEvolve config win, as ssh command-line options do', async () => {
    const t = await resolveSshTarget('gpu', { port: 22, user: 'bob', identityFile: '/keys/id_x', knownHostsFile: '/kh' }, config);
    expect(t.port).toBe(22);
    expect(t.user).toBe('bob');
    expect(t.identityFiles[0]).toBe('/keys/id_x');
    expect(t.knownHostsFiles[0]).toBe('/kh');
  });

  it('uses a hostname that no block names as is', async () => {
    const t = await resolveSshTarget('plain.example.org', {}, path.join(dir, 'no-such-config'));
    expect(t.hostName).toBe('plain.example.org');
    expect(t.port).toBe(22);
    expect(t.jumps).toEqual([]);
  });

  it('reads ~/.ssh/config, then /etc/ssh/ssh_config, when no file is named (first value wins)', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-home-'));
    const saved = process.env.HOME;
    try {
      process.env.HOME = home;
      fs.mkdirSync(path.join(home, '.ssh'));
      fs.writeFileSync(path.join(home, '.ssh', 'config'), 'Host mine\n  HostName 10.9.8.7\n  HashKnownHosts no\n');
      const systemText = fs.existsSync('/etc/ssh/ssh_config') ? fs.readFileSync('/etc/ssh/ssh_config', 'utf8') : '';
      const systemHashes = /^\s*HashKnownHosts\s+yes/im.test(systemText);
      const other = await resolveSshTarget('other-box');
      expect(other.hashKnownHosts).toBe(systemHashes);
      expect(other.knownHostsFiles[0]).toBe(path.join(home, '.ssh', 'known_hosts'));
      const mine = await resolveSshTarget('mine');
      expect(mine.hostName).toBe('10.9.8.7');
      expect(mine.hashKnownHosts).toBe(false);
    } finally {
      process.env.HOME = saved;
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('reads ProxyJump hop syntax', () => {
    expect(parseProxyJump('a,me@b:2222,ssh://you@c:23,[::1]:2200')).toEqual([
      { host: 'a', user: undefined, port: undefined },
      { host: 'b', user: 'me', port: 2222 },
      { host: 'c', user: 'you', port: 23 },
      { host: '::1', user: undefined, port: 2200 },
    ]);
  });
});
