// The timing lock is one per device per machine, whatever the transport: the local host and an SSH host on this
// one machine (a real OpenSSH server on 127.0.0.1), both given GPU 0, never hold the timing section at once.
// The harness records when each evaluation held the lock (verdict.timing.lock_held: one [start, end] in wall-clock
// seconds per timed pass of a shape).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationJob, PoolVerdict } from '../../src/contract/job';
import { LocalHost } from '../../src/remote/localHost';
import { SshHost } from '../../src/remote/sshHost';
import { startSshd } from '../support/sshd';
import type { Sshd } from '../support/sshd';

const example = path.resolve(__dirname, '..', '..', 'examples', 'cpp', 'matmul_blocked');
let sshd: Sshd;
let workdir: string;

beforeAll(async () => {
  sshd = await startSshd();
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-lock-work-'));
});
afterAll(async () => {
  await sshd?.stop();
  fs.rmSync(workdir, { recursive: true, force: true });
});

function job(id: string): EvaluationJob {
  const source = fs.readFileSync(path.join(example, 'candidates', 'tuned_blocks.cpp'), 'utf8');
  return { id, specPath: path.join(example, 'spec.py'), baselinePath: path.join(example, 'matmul.cpp'),
    candidateSource: `${source}\n// ${id}\n`, candidateFileName: 'matmul.cpp', timeoutS: 600 };
}

describe('the timing lock across transports', () => {
  it('a local job and an SSH job on the same GPU of one machine never time at once', async () => {
    const local = new LocalHost({ name: 'here', devices: [0], slots: 2 });
    const remote = new SshHost({ name: 'loop', type: 'ssh', host: '127.0.0.1', port: sshd.port, user: sshd.user,
      identityFile: sshd.userKey, knownHostsFile: sshd.knownHosts, workdir, slots: 2, devices: [0], python: sshd.python },
    { sshConfigFile: path.join(sshd.dir, 'no-config') });
    try {
      const verdicts: PoolVerdict[] = await Promise.all([
        ...[0, 1].map((i) => local.evaluate(job(`local-${i}`))),
        ...[0, 1].map((i) => remote.evaluate(job(`ssh-${i}`))),
      ]);
      expect(verdicts.map((v) => v.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      // One lock file for GPU 0 on this machine, named alike by both transports.
      expect(new Set(verdicts.map((v) => v.placement?.lock))).toEqual(new Set(['/tmp/kernelevolve-locks/gpu-0.lock']));
      expect(verdicts.map((v) => v.placement?.device)).toEqual(['0', '0', '0', '0']);
      const held = verdicts.flatMap((v) => (v.timing as { lock_held: [number, number][] }).lock_held
        .map((span) => ({ host: v.host, span }))).sort((a, b) => a.span[0] - b.span[0]);
      for (const h of held) expect(h.span[1]).toBeGreaterThan(h.span[0]);
      for (let i = 1; i < held.length; i++) {
        // Each timing section starts only after the one before it ended, across hosts too.
        expect(held[i].span[0], JSON.stringify(held)).toBeGreaterThanOrEqual(held[i - 1].span[1]);
      }
      expect(new Set(held.map((h) => h.host))).toEqual(new Set(['here', 'loop']));
    } finally {
      await Promise.all([local.dispose(), remote.dispose()]);
    }
  }, 600_000);
});
