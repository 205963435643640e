// One worker per GPU: a one-node Slurm cluster on 127.0.0.1 whose node offers two stand-in GPUs through
// gres/gpu, so Slurm schedules `--gres=gpu:1` per device and sets CUDA_VISIBLE_DEVICES as on a GPU node.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationJob } from '../../src/contract/job';
import { SlurmHost } from '../../src/remote/slurmHost';
import { startSlurm, type SlurmCluster } from '../support/slurm';
import { pythonWithNumpy } from '../support/sshd';

const ROOT = path.resolve(__dirname, '..', '..');
let cluster: SlurmCluster;

beforeAll(async () => {
  cluster = await startSlurm({ gpus: 2 });
});

afterAll(async () => {
  await cluster?.stop();
});

function softmax(i: number): EvaluationJob {
  const dir = path.join(ROOT, 'examples', 'cpp', 'softmax_rows');
  return { id: `g${i}`, specPath: path.join(dir, 'spec.py'), baselinePath: path.join(dir, 'softmax.cpp'), candidateFileName: 'vec16.cpp',
    candidateSource: `${fs.readFileSync(path.join(dir, 'candidates', 'vec16.cpp'), 'utf8')}\n// g${i}\n`, timeoutS: 300 };
}

describe('slurm host on GPU nodes', () => {
  it('runs one worker per GPU, each on its own device, and queues jobs beyond the GPUs', async () => {
    process.env.SLURM_CONF = cluster.conf;
    const host = new SlurmHost({ name: 'gpus', type: 'slurm', partition: cluster.partition, gres: 'gpu:1', maxJobs: 3,
      workdir: path.join(cluster.dir, 'shared'), python: pythonWithNumpy(), idleTimeoutS: 30 });
    try {
      const check = await host.check();
      expect(check.error).toBeUndefined();
      expect(check.facts.gpus).toBe('gpu:2');
      const verdicts = await Promise.all([0, 1, 2, 3].map((i) => host.evaluate(softmax(i))));
      expect(verdicts.map((v) => v.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      // Each worker job got one device from Slurm; the two running at once had different ones.
      expect(new Set(verdicts.map((v) => v.placement?.device))).toEqual(new Set(['0', '1']));
      const byJob = new Map(verdicts.map((v) => [v.placement?.jobId, v.placement?.device]));
      expect(byJob.size).toBeLessThanOrEqual(3);
      // maxJobs 3 asked for a third job; with both GPUs held by the (idle) workers, Slurm keeps it waiting.
      const states = cluster.squeue().filter((l) => l.endsWith(`|${host.jobName}`)).map((l) => l.split('|')[1]).sort();
      expect(states).toEqual(['PENDING', 'RUNNING', 'RUNNING']);
      expect(host.workerJobs.length).toBe(3);
    } finally {
      await host.dispose();
      delete process.env.SLURM_CONF;
    }
    expect(cluster.squeue()).toEqual([]);
  });
});
