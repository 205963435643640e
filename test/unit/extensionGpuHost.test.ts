// "Add GPU Host": the hosts ~/.ssh/config offers, and what the user types, as a kernelEvolve.hosts entry
// that the settings validator accepts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSshDestination, sshHostEntry, uniqueHostName } from '../../src/extension/gpuHostEntry';
import { validateConfig } from '../../src/remote/hostConfig';
import { listSshConfigHosts } from '../../src/remote/sshConfigFile';

const dir = mkdtempSync(path.join(tmpdir(), 'ke-gpuhost-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Add GPU Host', () => {
  it('offers the aliases of ~/.ssh/config (with Includes), not its patterns', async () => {
    writeFileSync(path.join(dir, 'more'), 'Host lab-h100\n  HostName 10.1.2.3\n');
    const config = path.join(dir, 'config');
    writeFileSync(config, `Include ${path.join(dir, 'more')}\nHost gpu-box gpu-alt\n  HostName gpu.example.org\n  User me\nHost *.internal !bastion\n  User x\n`);
    expect(await listSshConfigHosts(config)).toEqual([
      { alias: 'lab-h100', hostName: '10.1.2.3', user: undefined },
      { alias: 'gpu-box', hostName: 'gpu.example.org', user: 'me' },
      { alias: 'gpu-alt', hostName: 'gpu.example.org', user: 'me' },
    ]);
  });

  it('reads user@host:port and ssh commands as Remote-SSH does', () => {
    expect(parseSshDestination('me@gpu-box:2222')).toEqual({ host: 'gpu-box', user: 'me', port: 2222 });
    expect(parseSshDestination('ssh -p 2200 -i ~/.ssh/id_ed25519 me@10.0.0.7')).toEqual({ host: '10.0.0.7', user: 'me', port: 2200, identityFile: '~/.ssh/id_ed25519' });
    expect(parseSshDestination('gpu-box')).toEqual({ host: 'gpu-box', user: undefined });
    expect(parseSshDestination('me@')).toBeUndefined();
    expect(parseSshDestination('me@box:99999')).toBeUndefined();
  });

  it('writes an entry the validator accepts, under a name no other host has', () => {
    const name = uniqueHostName('gpu box', ['gpu-box']);
    expect(name).toBe('gpu-box-2');
    const entry = sshHostEntry(name, { host: 'gpu-box', user: 'me', port: 2222 });
    expect(validateConfig({ hosts: [{ name: 'gpu-box', type: 'local' }, entry] }).hosts[1]).toEqual({ name: 'gpu-box-2', type: 'ssh', host: 'gpu-box', user: 'me', port: 2222 });
  });
});
