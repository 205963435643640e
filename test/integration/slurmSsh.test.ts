// A slurm host whose login node is reached over SSH: a real sshd on 127.0.0.1 in front of a real one-node
// Slurm cluster; sbatch, squeue, scancel and the queue's bookkeeping all travel over the SSH connection.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationJob } from '../../src/contract/job';
import type { SlurmHostConfig } from '../../src/remote/hostConfig';
import { slurmHostFor } from '../../src/remote/slurmHostFactory';
import { startSlurm, type SlurmCluster } from '../support/slurm';
import { startSshd, type Sshd } from '../support/sshd';

const ROOT = path.resolve(__dirname, '..', '..');
let cluster: SlurmCluster;
let sshd: Sshd;

function example(name: string, candidate: string, source: string): EvaluationJob {
  const dir = path.join(ROOT, 'examples', 'cpp', name);
  return { id: `${name}-${candidate}`, specPath: path.join(dir, 'spec.py'), baselinePath: path.join(dir, source),
    candidateFileName: candidate, candidateSource: fs.readFileSync(path.join(dir, 'candidates', candidate), 'utf8'), timeoutS: 300 };
}

beforeAll(async () => {
  cluster = await startSlurm();
  sshd = await startSshd();
});

afterAll(async () => {
  await sshd?.stop();
  await cluster?.stop();
});

describe('slurm host behind SSH', () => {
  it('runs the whole cycle on the login node over SSH and reports job, node and cluster facts', async () => {
    const config: SlurmHostConfig = {
      name: 'remote-cluster', type: 'slurm', host: '127.0.0.1', port: sshd.port, user: sshd.user,
      identityFile: sshd.userKey, knownHostsFile: sshd.knownHosts, python: sshd.python,
      partition: cluster.partition, maxJobs: 2, workdir: path.join(cluster.dir, 'shared-ssh'), idleTimeoutS: 30,
      // What a site's login profile would do; the SSH session has no SLURM_CONF of its own.
      setup: `export SLURM_CONF=${cluster.conf}`,
    };
    const host = slurmHostFor(config);
    try {
      const check = await host.check();
      expect(check).toMatchObject({ reachable: true, facts: { login: `${sshd.user}@127.0.0.1:${sshd.port}`, partition: `${cluster.partition} (up)` } });
      const [good, bad] = await Promise.all([
        host.evaluate(example('softmax_rows', 'vec16.cpp', 'softmax.cpp')),
        host.evaluate(example('matmul_blocked', 'only_multiples_of_16.cpp', 'matmul.cpp')),
      ]);
      expect([good.status, bad.status]).toEqual(['ok', 'incorrect']);
      expect(good.placement).toMatchObject({ host: 'remote-cluster', node: cluster.node });
      expect(good.placement?.jobId).toMatch(/^\d+$/);
      expect(cluster.squeue().some((l) => l.endsWith(`|${host.jobName}`))).toBe(true);
    } finally {
      await host.dispose();
    }
    expect(cluster.squeue()).toEqual([]);
  });
});
