// The shares of the device's memory among problems self-judged side by side: what a refusal says a problem
// needs (read from the harness's own message, made here by memory_plan.py), and the order they start in.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { equalShare, grownShare, neededShare, ShareQueue } from '../../src/cli/suiteShares';

const HARNESS = path.resolve(__dirname, '../../harness');

/** memory_plan.refusal's message for one set of these sizes within `share` of a device of `whole` bytes. */
function refusal(inputBytes: number, outputBytes: number, share: number, whole: number, gpu: boolean): string {
  const code = `
import os, sys
os.environ["KERNELEVOLVE_DEVICE_MEMORY_BYTES"] = "${whole}"
os.environ["KERNELEVOLVE_DEVICE_MEMORY_SHARE"] = "${share}"
from kernelevolve_harness import memory_plan as M
free, source = M.free_bytes(gpu=False)
sys.stdout.write(M.refusal(${inputBytes}, ${inputBytes + outputBytes}, ${outputBytes}, free, source, ${gpu ? 'True' : 'False'}) or "")`;
  return execFileSync('python3', ['-c', code], { env: { ...process.env, PYTHONPATH: HARNESS }, encoding: 'utf8' });
}

describe('the share a refused problem needs', () => {
  it('reads the need and the device from the harness\'s refusal, with the headroom the harness keeps and a margin', () => {
    // KernelBench's element-wise problems on an H200: 6.4 GB in and out, a sixth of 143.8 GB each
    const text = refusal(6.44e9, 6.44e9, 0.158, 143.77e9, true);
    expect(text).toMatch(/does not fit in this GPU's memory/);
    const share = neededShare(text)!;
    // judging holds at least 5 x 6.44 GB, at its peak 8 x; the harness plans with 90% of its share less 1 GiB
    const need = (8 * 6.44e9 + 2 ** 30) / 0.9 / 143.77e9;
    expect(share).toBeGreaterThanOrEqual(need);
    expect(share).toBeLessThan(need + 0.01);
    // given that share, the harness plans it
    expect(refusal(6.44e9, 6.44e9, share, 143.77e9, true)).toBe('');
  });

  it('on a machine (no CUDA context kept back), in MB', () => {
    const text = refusal(2.5e6, 2.5e6, 0.316, 30e6, false);
    expect(text).toMatch(/12\.50 MB/);
    expect(neededShare(text)).toBe(0.75); // 12.5 MB x 1.6 over 90% of 30 MB
    expect(refusal(2.5e6, 2.5e6, 0.75, 30e6, false)).toBe('');
  });

  it('after running out of memory at run time, the share it had grown as a refusal\'s would be', () => {
    expect(grownShare(0.158)).toBe(0.26);
    expect(grownShare(0.5)).toBe(0.8);
  });

  it('is undefined where the text says nothing of what would fit', () => {
    expect(neededShare('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB')).toBeUndefined();
    // a refusal on the whole device names no share
    expect(neededShare(refusal(20e6, 20e6, 1, 30e6, false))).toBeUndefined();
  });
});

describe('problems side by side', () => {
  it('gives each of N problems 95% of the device over N, and one at a time the whole device', () => {
    expect(equalShare(6)).toBe(0.158);
    expect(equalShare(2)).toBe(0.475);
    expect(equalShare(1)).toBeUndefined();
  });

  it('starts the next while fewer than N run and its share fits beside theirs; a larger share goes first', () => {
    const q = new ShareQueue<string>(3);
    for (const p of ['a', 'b', 'c', 'd']) q.add(p, 0.316);
    expect([q.next()?.item, q.next()?.item, q.next()?.item, q.next()]).toEqual(['a', 'b', 'c', undefined]);
    q.done('a');
    q.add('a', 0.6, true); // refused in its share: it needs 0.6, ahead of d
    expect(q.next()).toBeUndefined(); // 0.632 + 0.6 is over 0.95
    q.done('b');
    expect(q.next()).toEqual({ item: 'a', share: 0.6 }); // 0.316 + 0.6
    expect(q.next()).toBeUndefined(); // d's 0.316 would make 1.232
    q.done('c');
    expect(q.next()).toEqual({ item: 'd', share: 0.316 });
    expect(q.size).toBe(0);
    expect(q.running).toBe(2);
  });

  it('starts a problem whose share is over the limit when nothing else runs', () => {
    const q = new ShareQueue<string>(2);
    q.add('huge', 0.99);
    expect(q.next()).toEqual({ item: 'huge', share: 0.99 });
  });
});
