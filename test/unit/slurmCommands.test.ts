import { describe, expect, it } from 'vitest';
import { gpusFromGres, parseSacctmgrLimits, parseSbatchJobId, parseSinfo, parseSqueue, workerScript } from '../../src/remote/slurmCommands';
import { shPath, shq } from '../../src/remote/slurmLoginShell';

describe('Slurm command lines and answers', () => {
  it('writes a worker batch script with the config\'s resources and one worker process', () => {
    const s = workerScript({
      jobName: 'kernelevolve-a', queueDir: '/shared/q', harnessParent: '/shared/h x', python: 'python3',
      partition: 'gpu', account: 'proj', gres: 'gpu:1', timeLimit: '02:00:00', sbatchOptions: ['--qos=high'], idleS: 60, pollS: 0.1,
    });
    expect(s.split('\n').filter((l) => l.startsWith('#SBATCH'))).toEqual([
      '#SBATCH --job-name=kernelevolve-a', '#SBATCH --output=/shared/q/logs/%j.out', '#SBATCH --ntasks=1',
      '#SBATCH --partition=gpu', '#SBATCH --account=proj', '#SBATCH --gres=gpu:1', '#SBATCH --time=02:00:00', '#SBATCH --qos=high',
    ]);
    expect(s).toContain("PYTHONPATH='/shared/h x'");
    expect(s).toContain('exec python3 -m kernelevolve_harness.worker_service worker --queue /shared/q --idle-s 60 --poll-s 0.1');
    expect(workerScript({ jobName: 'j', queueDir: '/q', harnessParent: '/h', python: 'python3', idleS: 1, pollS: 1 })).not.toContain('--partition');
    const withSetup = workerScript({ jobName: 'j', queueDir: '/q', harnessParent: '/h', python: 'python3', idleS: 1, pollS: 1, setup: 'module load cuda/12' });
    expect(withSetup.indexOf('module load cuda/12')).toBeLessThan(withSetup.indexOf('exec python3'));
  });

  it('reads sbatch, squeue, sinfo and sacctmgr answers', () => {
    expect(parseSbatchJobId('4242\n')).toBe('4242');
    expect(parseSbatchJobId('4242;cluster-a\n')).toBe('4242');
    expect(parseSbatchJobId('sbatch: error: Batch job submission failed')).toBeUndefined();
    expect(parseSqueue('12|RUNNING|gpu-3|None\n13|PENDING||Resources\n')).toEqual([
      { jobId: '12', state: 'RUNNING', node: 'gpu-3', reason: '' },
      { jobId: '13', state: 'PENDING', node: '', reason: 'Resources' },
    ]);
    const info = parseSinfo('gpu*|up|3|gpu-[1-3]|gpu:h100:8(S:0-1)|128|1000000|2-00:00:00|idle\ngpu*|up|1|gpu-4|gpu:h100:8(S:0-1)|128|1000000|2-00:00:00|mix\n');
    expect(info).toMatchObject({ partition: 'gpu', nodes: 4, nodeList: ['gpu-[1-3]', 'gpu-4'], states: ['idle:3', 'mix:1'], timeLimit: '2-00:00:00' });
    expect(gpusFromGres(info!.gres)).toBe('gpu:h100:8');
    expect(gpusFromGres(['(null)'])).toBe('none');
    expect(parseSacctmgrLimits('proj|me|gpu|normal|gres/gpu=16|8||1-00:00:00|\n')).toBe('proj/me/gpu: QOS=normal GrpTRES=gres/gpu=16 MaxJobs=8 MaxWall=1-00:00:00');
    expect(parseSacctmgrLimits('')).toBe('no association found');
  });

  it('quotes words and paths for the login node\'s shell', () => {
    expect(shq('plain/path-1.json')).toBe('plain/path-1.json');
    expect(shq("it's")).toBe(`'it'\\''s'`);
    expect(shPath('~/.cache/ke')).toBe('"$HOME"/.cache/ke');
    expect(shPath('/a b')).toBe("'/a b'");
  });
});
