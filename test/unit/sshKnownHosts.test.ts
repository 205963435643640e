// known_hosts reading checked against OpenSSH's own tools: ssh-keygen writes the hashed entries and
// prints the fingerprints we must match.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendKnownHost, checkHostKey, fingerprint, hostFieldMatches, knownHostsName, parseKnownHosts, readKnownHosts,
} from '../../src/remote/knownHosts';

let dir: string;
const keys: Record<string, { line: string; blob: Buffer }> = {};

function keygen(name: string, type: string): void {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]);
  const line = fs.readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  keys[name] = { line, blob: Buffer.from(line.split(' ')[1], 'base64') };
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-kh-'));
  keygen('a', 'ed25519');
  keygen('b', 'ed25519');
  keygen('c', 'ecdsa');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('known_hosts', () => {
  it('prints fingerprints exactly as ssh-keygen -l does', () => {
    const printed = execFileSync('ssh-keygen', ['-l', '-f', path.join(dir, 'a.pub')], { encoding: 'utf8' }).split(/\s+/)[1];
    expect(fingerprint(keys.a.blob)).toBe(printed);
  });

  it('uses [host]:port for ports other than 22', () => {
    expect(knownHostsName('gpu-box', 22)).toBe('gpu-box');
    expect(knownHostsName('gpu-box', 2222)).toBe('[gpu-box]:2222');
  });

  it('matches entries hashed by ssh-keygen -H, for plain and [host]:port names', () => {
    const file = path.join(dir, 'hashed');
    fs.writeFileSync(file, `gpu-box ${keys.a.line}\n[gpu-box]:2222 ${keys.b.line}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    const entries = parseKnownHosts(fs.readFileSync(file, 'utf8'));
    expect(entries.every((e) => e.hosts.startsWith('|1|'))).toBe(true);
    expect(checkHostKey(entries, ['gpu-box'], keys.a.blob).kind).toBe('trusted');
    expect(checkHostKey(entries, ['[gpu-box]:2222'], keys.b.blob).kind).toBe('trusted');
    expect(checkHostKey(entries, ['[gpu-box]:2222'], keys.a.blob).kind).toBe('mismatch');
    expect(checkHostKey(entries, ['other-box'], keys.a.blob).kind).toBe('unknown');
  });

  it('reads comma lists, wildcards and negations', () => {
    expect(hostFieldMatches('gpu-a,gpu-b,10.0.0.5', 'gpu-b')).toBe(true);
    expect(hostFieldMatches('*.cluster,!login.cluster', 'n01.cluster')).toBe(true);
    expect(hostFieldMatches('*.cluster,!login.cluster', 'login.cluster')).toBe(false);
    expect(hostFieldMatches('gpu-?', 'gpu-7')).toBe(true);
    expect(hostFieldMatches('[gpu-a]:2222', 'gpu-a')).toBe(false);
  });

  it('reports a different key for a known host as a mismatch naming what was expected', () => {
    const entries = parseKnownHosts(`# comment\n\ngpu-a,gpu-b ${keys.a.line}\n`, 'kh');
    const status = checkHostKey(entries, ['gpu-b'], keys.b.blob);
    expect(status.kind).toBe('mismatch');
    if (status.kind === 'mismatch') expect(fingerprint(status.expected[0].key)).toBe(fingerprint(keys.a.blob));
  });

  it('refuses a key marked @revoked even when another line trusts it', () => {
    const entries = parseKnownHosts(`@revoked * ${keys.a.line}\ngpu-a ${keys.a.line}\n`);
    expect(checkHostKey(entries, ['gpu-a'], keys.a.blob).kind).toBe('revoked');
  });

  it('ignores @cert-authority lines for plain key checks', () => {
    const entries = parseKnownHosts(`@cert-authority *.cluster ${keys.a.line}\n`);
    expect(checkHostKey(entries, ['n1.cluster'], keys.a.blob).kind).toBe('unknown');
  });

  it('appends entries that ssh-keygen -F then finds (plain and hashed)', async () => {
    const file = path.join(dir, 'appended');
    await appendKnownHost(file, '[127.0.0.1]:2200', keys.c.blob);
    await appendKnownHost(file, 'hashed-box', keys.b.blob, true);
    const found = execFileSync('ssh-keygen', ['-F', '[127.0.0.1]:2200', '-f', file], { encoding: 'utf8' });
    expect(found).toContain(keys.c.line.split(' ')[1]);
    const foundHashed = execFileSync('ssh-keygen', ['-F', 'hashed-box', '-f', file], { encoding: 'utf8' });
    expect(foundHashed).toContain(keys.b.line.split(' ')[1]);
    const entries = await readKnownHosts([file, path.join(dir, 'does-not-exist')]);
    expect(checkHostKey(entries, ['hashed-box'], keys.b.blob).kind).toBe('trusted');
  });
});
