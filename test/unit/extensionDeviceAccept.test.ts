// Accept when the kernel has winners on two kinds of hardware: the file gets a launcher choosing per device
// (each hardware's setting by compute capability, the original elsewhere), run here in Python to see that each
// device gets its own winner; with one hardware, or a winner that cannot be tabled, the variant goes in as it is
// and the user is told why the other hardware's winners are not in it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyEdits, planAccept } from '../../src/extension/acceptPlan';
import { planDeviceAccept } from '../../src/extension/deviceAccept';
import { KernelLocator } from '../../src/engine/kernelLocator';
import { PythonLaunches } from './engine/pythonLaunches';
import { TRITON_MATMUL } from './engine/tritonLandscape';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-device-accept-'));
const python = new PythonLaunches();
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
  python.dispose();
});

const kernel = { sourcePath: '/w/matmul.py', kernel: 'matmul_kernel' };
const H200 = { BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64, num_warps: 8, num_stages: 3 };
const A100 = { BLOCK_M: 64, BLOCK_N: 128, BLOCK_K: 32, num_warps: 4, num_stages: 4 };

/** A stored run as the run store writes it: run.json, the candidates' metadata, verdicts.jsonl. */
function storedRun(runs: string, runId: string, hardware: string, candidates: Array<{ id: string; speedup: number; knobs?: Record<string, number>; operator?: string }>): string {
  const dir = path.join(runs, runId);
  fs.mkdirSync(path.join(dir, 'candidates'), { recursive: true });
  const best = [...candidates].sort((a, b) => b.speedup - a.speedup)[0];
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ format: 1, runId, createdAt: '', updatedAt: "2026-12-01T10:00:00Z", status: 'finished',
    spec: { specPath: '/w/spec.py', backend: 'triton', ...kernel }, options: {}, hosts: [{ name: `${hardware}-box`, slots: 1, hardware }],
    best: { id: best.id, speedup: best.speedup, operator: best.operator ?? 'tune', status: 'ok' }, counters: { used: 9, evaluated: 10, duplicates: 0, invalid: 0 } }));
  const lines = [];
  for (const c of candidates) {
    fs.writeFileSync(path.join(dir, 'candidates', `${c.id}.json`), JSON.stringify({ id: c.id, operator: c.operator ?? 'tune', mode: c.operator ?? 'tune', knobs: c.knobs, placement: { host: `${hardware}-box` } }));
    lines.push(JSON.stringify({ id: c.id, verdict: { status: 'ok', reason: 'correct', speedup: c.speedup, speedup_interval: [c.speedup * 0.95, c.speedup * 1.05] } }));
  }
  fs.writeFileSync(path.join(dir, 'verdicts.jsonl'), lines.join('\n') + '\n');
  return dir;
}

const call = 'candidate.matmul(Tensor((2048, 2048)), Tensor((2048, 2048)), Tensor((2048, 2048)))';
function launchedOn(source: string, capability: string) {
  const l = python.run(source, call, capability)[0];
  return { BLOCK_M: l.BLOCK_M, BLOCK_N: l.BLOCK_N, BLOCK_K: l.BLOCK_K, num_warps: l.num_warps, num_stages: l.num_stages };
}

describe('accepting a variant of a kernel with winners on other hardware', () => {
  it('writes a launcher choosing per device, each hardware getting its winner and any other device the original', async () => {
    const runs = path.join(root, 'two-kinds');
    storedRun(runs, 'r-a100', 'nvidia-a100', [{ id: 'c0003', speedup: 1.84, knobs: A100 }]);
    const h200 = storedRun(runs, 'r-h200', 'nvidia-h200', [{ id: 'c0005', speedup: 2.31, knobs: H200 }, { id: 'c0002', speedup: 1.2, knobs: { ...H200, num_warps: 4 } }]);
    const d = planDeviceAccept({ runDir: h200, kernel, baseline: TRITON_MATMUL, candidateId: 'c0005' });
    if (d.kind !== 'by-device') throw new Error(`expected a launcher by device: ${JSON.stringify(d)}`);
    expect(d.message).toBe('a launcher choosing per device by compute capability: nvidia-h200 (9.0): c0005 2.31x (2.19-2.43); nvidia-a100 (8.0): c0003 of run r-a100 1.84x (1.75-1.93); the original on any other device');
    expect(launchedOn(d.source, '(9, 0)')).toEqual(H200);
    expect(launchedOn(d.source, '(8, 0)')).toEqual(A100);
    expect(launchedOn(d.source, '(8, 9)')).toEqual({ BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, num_warps: 1, num_stages: 1 });

    // what the editor applies to the untouched file is that launcher exactly
    const plan = planAccept({ locator: await KernelLocator.get(), grammar: 'python', kernel: 'matmul_kernel', fileLabel: 'matmul.py', baseline: TRITON_MATMUL, candidate: d.source, current: TRITON_MATMUL });
    if (!plan.ok) throw new Error(plan.reason);
    expect(applyEdits(TRITON_MATMUL, plan.edits)).toBe(d.source);

    // the variant the user picks is the one written for its hardware, even when it is not its run's best
    const other = planDeviceAccept({ runDir: h200, kernel, baseline: TRITON_MATMUL, candidateId: 'c0002' });
    if (other.kind !== 'by-device') throw new Error('expected a launcher by device');
    expect(launchedOn(other.source, '(9, 0)')).toEqual({ ...H200, num_warps: 4 });
    expect(launchedOn(other.source, '(8, 0)')).toEqual(A100);
  }, 60_000);

  it('accepts the variant as it is when the kernel won on one kind of hardware only', () => {
    const h200 = storedRun(path.join(root, 'one-kind'), 'r-h200', 'nvidia-h200', [{ id: 'c0005', speedup: 2.31, knobs: H200 }]);
    expect(planDeviceAccept({ runDir: h200, kernel, baseline: TRITON_MATMUL, candidateId: 'c0005' })).toEqual({ kind: 'plain' });
  });

  it('says why the other hardware\'s winners are not kept when they cannot share a launcher with this variant', () => {
    const runs = path.join(root, 'not-tabled');
    storedRun(runs, 'r-a100', 'nvidia-a100', [{ id: 'c0003', speedup: 1.84, knobs: A100 }]);
    const h200 = storedRun(runs, 'r-h200', 'nvidia-h200', [{ id: 'c0007', speedup: 2.5, operator: 'llm' }]);
    expect(planDeviceAccept({ runDir: h200, kernel, baseline: TRITON_MATMUL, candidateId: 'c0007' })).toEqual({ kind: 'plain',
      note: 'Winners on other hardware (nvidia-a100: c0003 of run r-a100) are not in it: this variant rewrites code, and only tuned launch parameters can be chosen per device.' });

    const dispatched = storedRun(runs, 'r-h200-shapes', 'nvidia-h200', [{ id: 'c0009', speedup: 2.6, operator: 'tune' }]);
    fs.writeFileSync(path.join(dispatched, 'candidates', 'c0009.json'), JSON.stringify({ id: 'c0009', operator: 'tune', mode: 'dispatch',
      knobs: { '{m=2048}': 'BLOCK_M=128 (c0004, 2.60x)' }, placement: { host: 'nvidia-h200-box' } }));
    expect(planDeviceAccept({ runDir: dispatched, kernel, baseline: TRITON_MATMUL, candidateId: 'c0009' })).toMatchObject({ kind: 'plain',
      note: expect.stringMatching(/are not in it: this variant already chooses per shape, and a device table holds one setting per device\.$/) });

    const same = path.join(root, 'same-capability');
    storedRun(same, 'r-h100', 'nvidia-h100', [{ id: 'c0004', speedup: 1.5, knobs: A100 }]);
    const h200b = storedRun(same, 'r-h200', 'nvidia-h200', [{ id: 'c0005', speedup: 2.31, knobs: H200 }]);
    expect(planDeviceAccept({ runDir: h200b, kernel, baseline: TRITON_MATMUL, candidateId: 'c0005' })).toEqual({ kind: 'plain',
      note: 'Winners on other hardware (nvidia-h100: c0004 of run r-h100) are not in it: nvidia-h100: the same compute capability (9.0) as nvidia-h200, whose variant you accepted.' });
  });
});
