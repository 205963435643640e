// An SSH server without an SFTP subsystem (a real OpenSSH on 127.0.0.1 whose sshd_config has no Subsystem
// line, as servers set up only for Remote-SSH often are): the harness and the spec reach the host over the
// exec channel instead, and candidates are judged as on any host.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationJob } from '../../src/contract/job';
import { SftpUnavailableError, SshConnection } from '../../src/remote/sshConnection';
import { resolveSshTarget } from '../../src/remote/sshConfigFile';
import { SshHost } from '../../src/remote/sshHost';
import { startSshd } from '../support/sshd';
import type { Sshd } from '../support/sshd';

const fixtures = path.join(__dirname, 'sshFixtures');
let sshd: Sshd;
let workdir: string;

beforeAll(async () => {
  sshd = await startSshd({ sftp: false });
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-nosftp-'));
});
afterAll(async () => {
  await sshd?.stop();
  fs.rmSync(workdir, { recursive: true, force: true });
});

function job(candidate: string, id: string): EvaluationJob {
  return { id, specPath: path.join(fixtures, 'spec.py'), baselinePath: path.join(fixtures, 'scale.cpp'),
    candidateSource: fs.readFileSync(path.join(fixtures, candidate), 'utf8'), candidateFileName: candidate };
}

describe('an SSH host without SFTP', () => {
  it('refuses SFTP, so the files move over the exec channel and candidates are judged', async () => {
    const target = await resolveSshTarget('127.0.0.1', { port: sshd.port, user: sshd.user, identityFile: sshd.userKey,
      knownHostsFile: sshd.knownHosts }, path.join(sshd.dir, 'no-config'));
    const conn = new SshConnection({ name: 'nosftp', target, connectAttempts: 2, backoffMs: 100 });
    try {
      await expect(conn.sftp()).rejects.toBeInstanceOf(SftpUnavailableError);
    } finally {
      await conn.close();
    }

    const host = new SshHost({ name: 'nosftp', type: 'ssh', host: '127.0.0.1', port: sshd.port, user: sshd.user,
      identityFile: sshd.userKey, knownHostsFile: sshd.knownHosts, workdir, slots: 2, python: sshd.python },
    { sshConfigFile: path.join(sshd.dir, 'no-config') });
    try {
      const verdicts = await Promise.all([host.evaluate(job('scale.cpp', 'ok')), host.evaluate(job('wrong.cpp', 'wrong'))]);
      expect(verdicts.map((v) => v.status)).toEqual(['ok', 'incorrect']);
      const check = await host.check();
      expect(check.reachable).toBe(true);
      expect(check.facts.numpy).toMatch(/^\d+\./);
    } finally {
      await host.dispose();
    }
    // The harness and the spec folder were put in place whole, once each.
    expect(fs.readdirSync(workdir).filter((e) => e.startsWith('harness-'))).toHaveLength(1);
    expect(fs.readdirSync(path.join(workdir, 'specs'))).toHaveLength(1);
    expect(fs.readdirSync(workdir).filter((e) => e.includes('.tmp-'))).toEqual([]);
    expect(sshd.log()).toMatch(/subsystem request for sftp/i);
  }, 300_000);
});
