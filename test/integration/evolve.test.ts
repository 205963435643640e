// `kernelevolve evolve` with the tuner on the local host and the real harness (g++, numpy): the JSON of
// docs/engine.md, the run store, a SIGKILL mid-evaluation followed by --resume that judges nothing twice, and
// Ctrl-C that stops cleanly with exit 130.
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'bin', 'kernelevolve.js');
const SPEC = path.join(ROOT, 'examples', 'cpp', 'matmul_blocked', 'spec.py');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-evolve-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[]): Promise<Result> {
  try {
    const r = await exec('node', [CLI, ...args], { maxBuffer: 1 << 24 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Candidates judged, in order (the leaders' confirmation lines aside). */
function verdictIds(runDir: string): string[] {
  return fs.readFileSync(path.join(runDir, 'verdicts.jsonl'), 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => JSON.parse(l)).filter((l) => l.verdict).map((l) => l.id as string);
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kernelevolve evolve (local host, real harness)', () => {
  it('improves the badly blocked matmul and prints the JSON object of docs/engine.md', async () => {
    const out = path.join(dir, 'json');
    const r = await cli(['evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '6', '--out', out, '--json']);
    const obj = JSON.parse(r.stdout);
    expect(Object.keys(obj)).toEqual(expect.arrayContaining(['runId', 'runDir', 'candidates', 'baseline', 'best']));
    expect(obj.runDir).toBe(out);
    expect(obj.candidates).toBe(7);
    expect(obj.baseline.status).toBe('ok');
    expect(obj.best.status).toBe('ok');
    expect(obj.best.operator).toBe('tune');
    // the leaders were judged again: the best's figure is the geometric mean of its evaluations after it was picked
    expect(obj.best.confirmed).toBe(true);
    expect(r.stderr).toMatch(new RegExp(`${obj.best.id} judged again: [\\d.]+x, confirmed`));
    expect(r.stderr).toMatch(/confirmed: the geometric mean of the 3 evaluations after it was picked, [\d.]+x, [\d.]+x, [\d.]+x; picked at [\d.]+x/);
    // the probes alone find block sizes far better than 64/16/16
    expect(obj.best.speedup).toBeGreaterThan(1.5);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/c0000 baseline ok/);
    expect(r.stderr).toMatch(/best: c\d{4} by tune/);
    expect(fs.readFileSync(path.join(out, 'best.diff'), 'utf8')).toMatch(/^-constexpr int BLOCK_/m);
    const record = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8'));
    expect(record).toMatchObject({ status: 'finished', reason: 'budget', best: { id: obj.best.id } });
    expect(verdictIds(out)).toEqual(['c0000', 'c0001', 'c0002', 'c0003', 'c0004', 'c0005', 'c0006']);
  });

  it('resumes a run killed with SIGKILL mid-evaluation without judging anything twice', async () => {
    const out = path.join(dir, 'killed');
    const child = spawn('node', [CLI, 'evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '7', '--out', out], { stdio: 'ignore', detached: true });
    // kill once three candidates are judged and the next one is being evaluated
    await waitFor(() => fs.existsSync(path.join(out, 'verdicts.jsonl')) && verdictIds(out).length >= 3
      && fs.readdirSync(path.join(out, 'candidates')).includes(`c000${verdictIds(out).length}.json`), 120_000);
    process.kill(-child.pid!, 'SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const before = verdictIds(out);
    expect(before.length).toBeLessThan(8);
    const r = await cli(['evolve', '--resume', out, '--json']);
    const obj = JSON.parse(r.stdout);
    const after = verdictIds(out);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(new Set(after).size).toBe(after.length);
    expect(obj.candidates).toBe(8);
    expect(after.length).toBe(8);
    expect(r.stderr).toMatch(/resuming run killed/);
  });

  it('stops on Ctrl-C: exit 130, the run saved as stopped, and resumable', async () => {
    const out = path.join(dir, 'stopped');
    const child = spawn('node', [CLI, 'evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '30', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    await waitFor(() => fs.existsSync(path.join(out, 'verdicts.jsonl')) && verdictIds(out).length >= 2, 120_000);
    child.kill('SIGINT');
    const code = await new Promise<number>((r) => child.once('exit', (c) => r(c ?? -1)));
    expect(code).toBe(130);
    const record = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8'));
    expect(record.status).toBe('stopped');
    expect(stdout).toMatch(/continue with: kernelevolve evolve --resume/);
  });

  it('exits 2 with a sentence for bad arguments', async () => {
    const r = await cli(['evolve', '--spec', SPEC, '--operators', 'tune,magic']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown operator "magic"/);
    const r2 = await cli(['evolve', '--resume', dir]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/is not a KernelEvolve run/);
  });
});
