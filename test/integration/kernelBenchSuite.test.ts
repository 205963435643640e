// `kernelevolve suite DIR` over this project's numpy problems (examples/kernelbench/cpu), the bundled CLI, the
// scripted OpenAI-compatible server answering each problem's prompt, and the real harness; and over a folder laid
// out as KernelBench's (level subfolders, names repeating across levels): killed midway and run again, and the
// self-judgement of every problem.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer, type RecordedRequest } from '../support/scriptedLlmServer';
import { tempFolder } from '../support/tempFolders';

const ROOT = path.resolve(__dirname, '../..');
const CPU = path.join(ROOT, 'examples/kernelbench/cpu');
// KernelBench's level-1 cumsum in numpy: `dim` is an argument of Model (get_init_inputs), not a size
const CUMSUM = readFileSync(path.join(ROOT, 'harness/tests/specs/kernelbench/cumsum_dim_arg.py'), 'utf8');

/** A folder laid out as KernelBench's: level subfolders, file names that repeat across levels. */
function kernelBenchFolder(files: Record<string, string>): string {
  const dir = tempFolder('ke-kb-');
  for (const [name, from] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    if (from.includes('\n')) writeFileSync(path.join(dir, name), from);
    else copyFileSync(from, path.join(dir, name));
  }
  return dir;
}

/** The processes whose command line names `text` (this test's suite and its children). */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) pids.push(Number(pid));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const fence = (code: string) => `Rationale: one C++ pass.\n\n\`\`\`python\n${code}\`\`\`\n`;
const RELU = readFileSync(path.join(CPU, 'candidates/relu_scale.py'), 'utf8');
// a softmax that forgets to normalise: wrong, so that problem has no correct kernel
const SOFTMAX_WRONG = readFileSync(path.join(CPU, 'candidates/softmax_rows.py'), 'utf8').replace('o[j] *= inv;', 'o[j] *= 1.0f;');

function answerFor(req: RecordedRequest) {
  const user = String(req.body?.messages?.[1]?.content ?? '');
  return { kind: 'answer' as const, content: fence(/softmax/i.test(user) ? SOFTMAX_WRONG : RELU) };
}

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([], { fallback: answerFor });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('kernelevolve suite', () => {
  it('runs every problem of a folder and reports correct, speedups, fast_p, tokens and seconds', async () => {
    const out = path.join(tempFolder('ke-suite-'), 'suite');
    const r = await runCli(cli, ['suite', CPU, '--operators', 'llm', '--model', 'scripted', '--budget', '2', '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const byName = Object.fromEntries(result.problems.map((p: any) => [p.problem, p]));
    expect(Object.keys(byName).sort()).toEqual(['relu_scale', 'softmax_rows']);
    expect(byName.relu_scale.correct).toBe(true);
    expect(byName.relu_scale.speedupEager).toBeGreaterThan(0);
    expect(byName.relu_scale.tokens).toBeGreaterThan(0);
    expect(byName.relu_scale.evalSeconds).toBeGreaterThan(0);
    expect(readFileSync(byName.relu_scale.kernelFile, 'utf8')).toContain('class ModelNew');
    expect(byName.softmax_rows.correct).toBe(false);
    expect(byName.softmax_rows.note).toMatch(/^incorrect/);
    expect(result.fastP.eager['fast_0.0']).toBe(0.5);
    // numpy problems have no torch.compile baseline
    expect(byName.relu_scale.speedupCompile).toBeUndefined();
    expect(existsSync(path.join(out, 'suite.json'))).toBe(true);
    const table = readFileSync(path.join(out, 'suite.txt'), 'utf8');
    expect(table).toMatch(/relu_scale\s+yes/);
    expect(table).toMatch(/softmax_rows\s+no/);
    expect(table).toContain('fast_1.5');
  });

  it('killed midway, the same command finishes the rest: finished problems are not judged again, the table covers all', async () => {
    const dir = kernelBenchFolder({
      'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
      'level1/2_softmax_rows.py': path.join(CPU, 'softmax_rows.py'),
      'level2/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
    });
    const out = path.join(dir, 'results');
    const args = ['suite', dir, '--operators', 'llm', '--model', 'scripted', '--budget', '2', '--json', '--out', out];
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' };
    const first = path.join(out, 'level1', '1_relu_scale');
    const suite = spawn(process.execPath, ['-e', `require(${JSON.stringify(cli)}).main(process.argv.slice(1))`, ...args], {
      cwd: ROOT, env: { ...process.env, KERNELEVOLVE_HARNESS_DIR: path.join(ROOT, 'harness'), ...env }, stdio: 'ignore',
    });
    const second = path.join(out, 'level1', '2_softmax_rows');
    await waitFor(() => existsSync(path.join(first, 'row.json')), 150_000, 'the first problem to finish');
    // killed in the middle of the second problem's run (its baseline judged)
    await waitFor(() => existsSync(path.join(second, 'run', 'verdicts.jsonl')), 60_000, 'the second problem\'s first verdict');
    suite.kill('SIGKILL');
    // the problem it was on is not judged on by an orphan: its child ends with the suite
    await waitFor(() => processesNaming(out).length === 0, 30_000, 'the suite\'s children to end');
    expect(existsSync(path.join(second, 'row.json'))).toBe(false);
    const rowBefore = readFileSync(path.join(first, 'row.json'), 'utf8');
    const verdictsBefore = readFileSync(path.join(first, 'run', 'verdicts.jsonl'), 'utf8');
    const mtime = statSync(path.join(first, 'row.json')).mtimeMs;

    const r = await runCli(cli, args, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/resuming the suite in .*: 1 of 3 problems finished before, 2 to go/);
    const result = JSON.parse(r.stdout);
    expect(result.problems.map((p: any) => p.problem)).toEqual(['level1/1_relu_scale', 'level1/2_softmax_rows', 'level2/1_relu_scale']);
    expect(result.finished).toBe(3);
    expect(result.problems.map((p: any) => p.correct)).toEqual([true, false, true]);
    // the finished problem was not run again
    expect(readFileSync(path.join(first, 'row.json'), 'utf8')).toBe(rowBefore);
    expect(statSync(path.join(first, 'row.json')).mtimeMs).toBe(mtime);
    expect(readFileSync(path.join(first, 'run', 'verdicts.jsonl'), 'utf8')).toBe(verdictsBefore);
    expect(r.stderr).not.toMatch(/\[\d\/3\] level1\/1_relu_scale/);
    // the problem it was killed in is resumed where its run stood, not started again
    expect(readFileSync(path.join(second, 'log.txt'), 'utf8')).toMatch(/^resuming run /m);
    expect(readFileSync(path.join(out, 'suite.txt'), 'utf8')).toMatch(/level2\/1_relu_scale\s+yes/);
    // the leader confirmed once: no candidate of a run judged more than twice (its first evaluation and its figure)
    for (const p of result.problems) {
      const ids = readFileSync(path.join(p.runDir, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
      for (const id of new Set(ids)) expect(ids.filter((i) => i === id).length, `${p.problem} ${id}`).toBeLessThanOrEqual(2);
    }
    // another suite's options in the same folder are refused, naming the option
    const other = await runCli(cli, ['suite', dir, '--budget', '3', '--out', out]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/holds another suite \(--budget "2" there, "3" here/);
  }, 300_000);

  it('Ctrl-C stops the suite with the table so far and the line to finish it; --resume OUT finishes it and says how long both sessions took', async () => {
    const dir = kernelBenchFolder({
      'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
      'level1/2_softmax_rows.py': path.join(CPU, 'softmax_rows.py'),
      'level1/89_cumsum.py': CUMSUM,
    });
    const out = path.join(dir, 'self');
    const suite = spawn(process.execPath, ['-e', `require(${JSON.stringify(cli)}).main(process.argv.slice(1)).then((c) => { process.exitCode = c; })`,
      'suite', dir, '--self-judge', '--json', '--out', out], {
      cwd: ROOT, env: { ...process.env, KERNELEVOLVE_HARNESS_DIR: path.join(ROOT, 'harness') }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    suite.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    suite.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const ended = new Promise<number | null>((resolve) => suite.on('close', resolve));
    await waitFor(() => existsSync(path.join(out, 'level1', '1_relu_scale', 'row.json')), 120_000, 'the first problem to finish');
    suite.kill('SIGINT');
    expect(await ended).toBe(130);
    expect(stderr).toMatch(/interrupted: [12] of 3 problems finished; run the same command again \(or `kernelevolve suite --resume .*self`\) to finish the rest/);
    const partial = JSON.parse(stdout);
    expect(partial.total).toBe(3);
    expect(partial.finished).toBeLessThan(3);
    await waitFor(() => processesNaming(out).length === 0, 30_000, 'the suite\'s children to end');

    const r = await runCli(cli, ['suite', '--resume', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.selfJudge).toBe(true);
    expect(result.problems.map((p: any) => [p.problem, p.status])).toEqual([['level1/1_relu_scale', 'ok'], ['level1/2_softmax_rows', 'ok'], ['level1/89_cumsum', 'ok']]);
    expect(r.stderr).toMatch(new RegExp(`resuming the suite in .*: ${partial.finished} of 3 problems finished before`));
    // the time it took over both sessions, not only the last one's
    const sessions = JSON.parse(readFileSync(path.join(out, 'suite-sessions.json'), 'utf8'));
    expect(sessions).toEqual([partial.session.elapsedSeconds, result.session.elapsedSeconds]);
    expect(result.session.sessionsSeconds).toEqual(sessions);
    expect(readFileSync(path.join(out, 'suite.txt'), 'utf8')).toMatch(/\(its 2 sessions took [\d.]+ s in all\)/);
  }, 300_000);

  it('--self-judge judges every problem\'s Model against itself: all ok near 1.00, the summary, init arguments not shapes', async () => {
    const dir = kernelBenchFolder({
      'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
      'level1/2_softmax_rows.py': path.join(CPU, 'softmax_rows.py'),
      'level1/89_cumsum.py': CUMSUM,
      'level2/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
    });
    const out = path.join(dir, 'self');
    const r = await runCli(cli, ['suite', dir, '--self-judge', '--json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.problems.map((p: any) => p.problem)).toEqual(['level1/1_relu_scale', 'level1/2_softmax_rows', 'level1/89_cumsum', 'level2/1_relu_scale']);
    for (const p of result.problems) {
      expect(p.status, p.reason).toBe('ok');
      // identical code against itself: its interval covers 1.00, and says so however loaded the machine (20 runs
      // beside two busy processes: docs/benchmarks.md, "CPU self-judgement")
      const [lo, hi] = p.interval;
      expect(lo <= 1 && hi >= 1, `${p.problem} read ${p.speedup.toFixed(3)}x against itself, interval ${lo.toFixed(3)}-${hi.toFixed(3)} (width ${(hi - lo).toFixed(3)})`).toBe(true);
      expect(p.speedup).toBeGreaterThanOrEqual(lo);
      expect(p.speedup).toBeLessThanOrEqual(hi);
      expect(p.kernelbench).toBeGreaterThan(0);
      expect(p.wallSeconds).toBeGreaterThan(0);
    }
    expect(result.byStatus).toEqual({ ok: 4 });
    expect(result.slowest).toHaveLength(4);
    const table = readFileSync(path.join(out, 'suite.txt'), 'utf8');
    expect(table).toContain('self-judged: 4 problems; ok 4');
    expect(table).toMatch(/within 1\.00 \+- 0\.03: \d of 4/);
    expect(table).toMatch(/^problem\s+status\s+itself\s+interval\s+KB eager/m);
    // cumsum's dim = 1 is Model's argument: never a shape variable
    const cumsum = JSON.parse(readFileSync(path.join(out, 'level1', '89_cumsum', 'verdict.json'), 'utf8'));
    expect(cumsum.shapes.map((s: any) => s.shape)).toEqual([{ batch_size: 32 }]);
    // off a terminal, the progress is plain lines
    expect(r.stderr).toMatch(/^\[4\/4\] level2\/1_relu_scale: ok [\d.]+x against itself \([\d.]+ s\); elapsed \S+, ETA 0s$/m);
    expect(r.stderr).not.toContain('\x1b[2K');
  }, 300_000);

  it('--self-judge --jobs 3 judges three problems at once, each within its share of the memory; one refused there gets the share it needs beside the others, one that needs more than 95% of it is judged alone after them', async () => {
    // relu_scale with batch x dim float32 in and out: judging holds at least 5 sets (3 of the inputs, 2 of the
    // outputs), at its peak 8. Of the 30 MB stated for the machine each of three gets 0.316; 256 x 1800 (9.2 MB
    // at least) is given 0.55, which fits beside one other; 256 x 4864 (24.9 MB) only the whole machine.
    const sized = (dim: number) => readFileSync(path.join(CPU, 'relu_scale.py'), 'utf8').replace('batch_size = 16', 'batch_size = 256')
      .replace('dim = 1000', `dim = ${dim}`).replace(/SHAPES = .*\n/, `SHAPES = [{"batch_size": 256, "dim": ${dim}}]\n`);
    const dir = kernelBenchFolder({
      'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'),
      'level1/2_softmax_rows.py': path.join(CPU, 'softmax_rows.py'),
      'level1/3_relu_scale_big.py': sized(4864),
      'level1/4_relu_scale_mid.py': sized(1800),
      'level1/89_cumsum.py': CUMSUM,
    });
    const out = path.join(dir, 'self');
    const r = await runCli(cli, ['suite', dir, '--self-judge', '--jobs', '3', '--json', '--out', out], { KERNELEVOLVE_DEVICE_MEMORY_BYTES: String(30_000_000) });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    for (const p of result.problems) expect(p.status, p.reason).toBe('ok');
    const bigRow = result.problems.find((p: any) => p.problem === 'level1/3_relu_scale_big');
    expect(bigRow.reason).toMatch(/^judged alone after running out of memory beside others; /);
    expect(r.stderr).toMatch(/level1\/3_relu_scale_big: out of memory beside others \([\d.]+ s\); judged again alone once the others are done/);
    // its refusal beside others gave the arithmetic of the share
    const log = readFileSync(path.join(out, 'level1', '3_relu_scale_big', 'log-beside-others.txt'), 'utf8');
    expect(log).toMatch(/does not fit in this machine's memory/);
    expect(log).toMatch(/share of 0\.32/);
    const midRow = result.problems.find((p: any) => p.problem === 'level1/4_relu_scale_mid');
    // beside others with what it needs (or, where it read off 1.00 there on a loaded machine, alone after that)
    expect(midRow.reason).toMatch(/^judged (beside others |alone after reading [\d.]+x against itself beside others \()with 0\.55 of the device's memory after 0\.316 was too little\)?; /);
    expect(r.stderr).toMatch(/level1\/4_relu_scale_mid: does not fit in 0\.316 of the device's memory \([\d.]+ s\); judged again beside others with the 0\.55 it needs/);
    // three at once: the third problem started before the first ended
    const lines = r.stderr.split('\n');
    const starts = lines.map((l, i) => (/ \.\.\.$/.test(l) ? i : -1)).filter((i) => i >= 0);
    const firstEnd = lines.findIndex((l) => /^\[\d+\/5\] \S+: /.test(l) || /: (?:out of memory|does not fit)/.test(l));
    expect(starts[2]).toBeLessThan(firstEnd);
    expect(result.session).toMatchObject({ jobs: 3 });
    expect(readFileSync(path.join(out, 'suite.txt'), 'utf8')).toMatch(/3 at a time, this session took [\d.]+ s/);
  }, 300_000);

  it('--self-judge --jobs 2 judges alone again a problem that reads outside 1.00 +- 0.03 or is not ok beside others, and keeps what it read there; one out of memory gets a larger share', async () => {
    // a stand-in for a neighbour's load on the device: the candidate's calls take 0.2 ms longer only while a share
    // of the memory is set (beside other problems); alone it reads 1.00 again
    const noisy = `import builtins
import os
import time

import numpy as np

batch_size = 16
dim = 1000
SHAPES = [{"batch_size": 16, "dim": 1000}]
# the third import in a process is the candidate's (its worker loads the spec, then the baseline, then it)
_n = getattr(builtins, "_noisy_imports", 0)
builtins._noisy_imports = _n + 1
SLOWED = _n == 2 and "KERNELEVOLVE_DEVICE_MEMORY_SHARE" in os.environ


class Model:
    def __init__(self, dim):
        self.weight = np.random.rand(dim).astype(np.float32)

    def forward(self, x):
        if SLOWED:
            time.sleep(0.0002)
        return np.maximum(x, 0) * self.weight


def get_inputs():
    return [np.random.randn(batch_size, dim).astype(np.float32)]


def get_init_inputs():
    return [dim]
`;
    // wrong only beside others (a stand-in for cuDNN's TF32 algorithms, picked by the memory they can have), and
    // out of memory in the equal share (a stand-in for a neighbour that held more than its own)
    const wrongBeside = noisy.replace('time.sleep(0.0002)', 'return np.maximum(x, 0) * self.weight + 0.01');
    const tight = noisy.replace('if SLOWED:\n            time.sleep(0.0002)',
      'if float(os.environ.get("KERNELEVOLVE_DEVICE_MEMORY_SHARE", "1")) < 0.5:\n            raise MemoryError("out of memory (a stand-in)")');
    expect(wrongBeside).not.toBe(noisy);
    expect(tight).not.toBe(noisy);
    const dir = kernelBenchFolder({
      'level1/1_relu_scale.py': path.join(CPU, 'relu_scale.py'), 'level1/2_noisy.py': noisy,
      'level1/3_wrong_beside.py': wrongBeside, 'level1/4_tight.py': tight,
    });
    const out = path.join(dir, 'self');
    const r = await runCli(cli, ['suite', dir, '--self-judge', '--jobs', '2', '--json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const row = result.problems.find((p: any) => p.problem === 'level1/2_noisy');
    expect(row.status, row.reason).toBe('ok');
    expect(row.besideOthers).toBeLessThan(0.5);
    expect(row.speedup).toBeGreaterThan(0.5); // alone, no slower than itself (a loaded CI machine's CPU is noisy)
    expect(row.reason).toMatch(/^judged alone after reading 0\.\d{3}x against itself beside others; /);
    expect(r.stderr).toMatch(/level1\/2_noisy: read 0\.\d{3}x against itself beside others \([\d.]+ s\); judged again alone once the others are done/);
    const first = JSON.parse(readFileSync(path.join(out, 'level1', '2_noisy', 'verdict-beside-others.json'), 'utf8'));
    expect(first.speedup).toBe(row.besideOthers);
    expect(result.rejudgedAlone).toBeGreaterThanOrEqual(1);
    const table = readFileSync(path.join(out, 'suite.txt'), 'utf8');
    expect(table).toMatch(/level1\/2_noisy .* alone; 0\.\d\dx beside others/);
    expect(table).toMatch(/judged again alone after reading outside it beside other problems/);
    // not ok beside others: judged alone, its first verdict kept
    const wrong = result.problems.find((p: any) => p.problem === 'level1/3_wrong_beside');
    expect(wrong.status, wrong.reason).toBe('ok');
    expect(wrong.reason).toMatch(/^judged alone after it was incorrect beside others; /);
    expect(r.stderr).toMatch(/level1\/3_wrong_beside: incorrect beside others \([\d.]+ s\); judged again alone once the others are done/);
    expect(JSON.parse(readFileSync(path.join(out, 'level1', '3_wrong_beside', 'verdict-beside-others.json'), 'utf8')).status).toBe('incorrect');
    // out of memory at run time: a larger share, beside others
    const tightRow = result.problems.find((p: any) => p.problem === 'level1/4_tight');
    expect(tightRow.status, tightRow.reason).toBe('ok');
    // (or, where it read off 1.00 there on a loaded machine, alone after that)
    expect(tightRow.reason).toMatch(/^judged (beside others |alone after reading [\d.]+x against itself beside others \()with 0\.76 of the device's memory after 0\.475 was too little\)?; /);
    expect(r.stderr).toMatch(/level1\/4_tight: out of memory beside others with 0\.475 of the device's memory \([\d.]+ s\); judged again beside others with 0\.76/);
  }, 300_000);

  it('refuses --jobs without --self-judge, and a --jobs that is not a count, with what to do', async () => {
    const a = await runCli(cli, ['suite', CPU, '--jobs', '2']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/--jobs judges problems side by side with --self-judge/);
    const b = await runCli(cli, ['suite', CPU, '--self-judge', '--jobs', 'two']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--jobs is how many problems are judged at once/);
  });

  it('says what a suite folder needs when it holds no problem', async () => {
    const r = await runCli(cli, ['suite', path.join(ROOT, 'examples/cpp')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no KernelBench-format problem/);
  });
});
