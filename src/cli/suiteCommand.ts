// `kernelevolve suite DIR`: every KernelBench-format problem in DIR evolved with the same per-problem budget,
// then the best correct ModelNew judged once more against the problem's Model under torch.compile (GPU
// problems), and one table: correct, speedup over eager and over torch.compile, fast_p, tokens and seconds
// of evaluation. Each problem runs as `kernelevolve evolve` in a child process of this same CLI (its progress
// on stderr, its result read from its --json line and its run folder), so one problem's failure is a row,
// not the end of the suite.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isKernelBenchProblem, problemBackend } from '../engine/kernelBenchProblem';
import { pairedScore } from '../engine/pairedScore';
import { RunStore } from '../engine/runStore';
import { CliError, EXIT } from './cliError';
import { inputsOption } from './inputsOption';
import { suiteJson, suiteTable, type SuiteRow } from './suiteReport';

export const SUITE_USAGE = `usage: kernelevolve suite DIR [--budget N] [--operators tune,llm] [--model M] [--host NAME ...]
                         [--config FILE] [--json] [--out DIR] [--compile all|none|N] [--inputs wide|problem]`;

/** The line that makes a problem's copy the torch.compile baseline (harness model_problem.py reads it). */
const COMPILE_MARKER = '\n\n# The problem\'s Model under torch.compile: the second baseline of `kernelevolve suite`.\nTORCH_COMPILE = True\n';

interface ChildResult {
  code: number | null;
  stdout: string;
}

/** This CLI again, as a child: the bundle exports main (dist/cli.js, or a test's bundle). */
function runSelf(args: string[]): Promise<ChildResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(__filename)}).main(process.argv.slice(1)).then((c) => { process.exitCode = c; })`, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

function lastJson(stdout: string): any {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

interface Judged {
  id: string;
  status: string;
  speedup?: number;
  reason?: string;
  totalS: number;
}

/** Every judgement in a run folder, the baseline's and the leaders' confirmations included. */
export function judgements(runDir: string): Judged[] {
  let text = '';
  try {
    text = fs.readFileSync(path.join(runDir, 'verdicts.jsonl'), 'utf8');
  } catch {
    return [];
  }
  const out: Judged[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line);
      // a leader judged once more is stored as {id, confirmation}: it counts like any judgement of that id
      const v = rec.verdict ?? rec.confirmation ?? rec;
      out.push({ id: rec.id, status: v.status, speedup: v.speedup, reason: v.reason, totalS: Number(v.stages?.total_s ?? 0) });
    } catch {
      // a line cut off by a crash: that judgement is not counted
    }
  }
  return out;
}

/** The problem's answer: the run's best when it is a candidate, else (nothing beat the problem itself) its correct
 *  candidate of the highest score; each at its one figure, the run's score for it (pairedScore.ts: a confirmed
 *  leader's figure is the mean of its evaluations after it was picked), as `evolve` and the panel report it. One
 *  that failed any evaluation is not correct. */
export function bestCorrect(runDir: string): { id: string; speedup: number } | undefined {
  let loaded: ReturnType<typeof RunStore.load>;
  try {
    loaded = RunStore.load(runDir);
  } catch {
    return undefined;
  }
  const correct = loaded.candidates.filter((c) => c.id !== 'c0000' && c.verdict?.status === 'ok' && pairedScore(c) > 0);
  const named = loaded.record.best?.id;
  const pick = correct.find((c) => c.id === named) ?? correct.sort((a, b) => pairedScore(b) - pairedScore(a))[0];
  return pick && { id: pick.id, speedup: pairedScore(pick) };
}

export async function suiteCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      budget: { type: 'string' },
      operators: { type: 'string' },
      model: { type: 'string' },
      host: { type: 'string', multiple: true },
      config: { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      compile: { type: 'string', default: 'all' },
      time: { type: 'string' },
      inputs: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const dir = positionals[0];
  if (!dir || positionals.length > 1) throw new CliError(`suite needs one folder of problems.\n${SUITE_USAGE}`);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.py')).sort();
  } catch {
    throw new CliError(`Cannot read the folder ${dir}; give the folder that holds the problem files.`);
  }
  const problems = names.map((n) => path.resolve(dir, n)).filter((p) => isKernelBenchProblem(fs.readFileSync(p, 'utf8')));
  if (!problems.length) {
    throw new CliError(`${dir} holds no KernelBench-format problem (a .py file defining class Model, get_inputs() and get_init_inputs()).`);
  }
  const compileLimit = values.compile === 'all' ? Infinity : values.compile === 'none' ? 0 : Number(values.compile);
  if (!Number.isInteger(compileLimit) && compileLimit !== Infinity) throw new CliError(`--compile must be all, none or a number of problems, not "${values.compile}".`);
  const out = path.resolve(values.out ?? path.join('.kernelevolve', 'suites', new Date().toISOString().replace(/[:.]/g, '-')));
  fs.mkdirSync(out, { recursive: true });
  const passOn = [
    ...(values.budget ? ['--budget', values.budget] : []),
    ...(values.time ? ['--time', values.time] : []),
    ...(values.operators ? ['--operators', values.operators] : []),
    ...(values.model ? ['--model', values.model] : []),
    ...(values.config ? ['--config', values.config] : []),
    ...(inputsOption(values.inputs) ? ['--inputs', values.inputs as string] : []),
  ];
  const hostArgs = (values.host ?? []).flatMap((h) => ['--host', h]);

  const rows: SuiteRow[] = [];
  let compiled = 0;
  for (const problem of problems) {
    const name = path.basename(problem, '.py');
    const folder = path.join(out, name);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.mkdirSync(folder, { recursive: true });
    const runDir = path.join(folder, 'run');
    process.stderr.write(`\n=== ${name} (${rows.length + 1} of ${problems.length})\n`);
    const evolved = await runSelf(['evolve', '--spec', problem, '--json', '--out', runDir, ...passOn, ...hostArgs]);
    const result = lastJson(evolved.stdout);
    const judged = judgements(runDir);
    const row: SuiteRow = {
      problem: name, correct: false, tokens: (result?.usage?.promptTokens ?? 0) + (result?.usage?.completionTokens ?? 0),
      evalSeconds: judged.reduce((s, j) => s + j.totalS, 0), candidates: judged.filter((j) => j.id !== 'c0000').length, runDir,
    };
    const best = bestCorrect(runDir);
    if (!result) row.note = `evolve exited ${evolved.code} without a result (see its messages above)`;
    else if (result.baseline && result.baseline.status !== 'ok') row.note = `the problem itself failed: ${result.baseline.reason ?? result.baseline.status}`;
    if (best) {
      row.correct = true;
      row.speedupEager = best.speedup;
      row.bestId = best.id;
      row.kernelFile = path.join(folder, `${name}_new.py`);
      fs.copyFileSync(path.join(runDir, 'candidates', `${best.id}.py`), row.kernelFile);
      if (problemBackend(fs.readFileSync(problem, 'utf8')) === 'model-cuda' && compiled < compileLimit) {
        compiled++;
        const compileBaseline = path.join(folder, `${name}_compiled.py`);
        fs.writeFileSync(compileBaseline, fs.readFileSync(problem, 'utf8') + COMPILE_MARKER);
        process.stderr.write(`${name}: judging ${best.id} against the Model under torch.compile\n`);
        const ev = await runSelf(['evaluate', '--spec', problem, '--candidate', row.kernelFile, '--baseline', compileBaseline, '--json', ...(values.config ? ['--config', values.config] : []), ...(values.inputs ? ['--inputs', values.inputs] : []), ...hostArgs]);
        const v = lastJson(ev.stdout);
        if (v?.status === 'ok' && typeof v.speedup === 'number') row.speedupCompile = v.speedup;
        else row.note = `against torch.compile: ${v ? `${v.status}: ${v.reason}` : `evaluate exited ${ev.code}`}`;
        row.evalSeconds += Number(v?.stages?.total_s ?? 0);
      }
    } else if (!row.note) {
      const last = [...judged].reverse().find((j) => j.id !== 'c0000');
      row.note = last ? `${last.status}: ${last.reason ?? ''}` : 'no candidate was judged';
    }
    rows.push(row);
  }

  const table = suiteTable(rows);
  const json = { ...suiteJson(rows), out };
  fs.writeFileSync(path.join(out, 'suite.json'), JSON.stringify(json, null, 2) + '\n');
  fs.writeFileSync(path.join(out, 'suite.txt'), table + '\n');
  if (values.json) {
    process.stderr.write('\n' + table + '\n');
    process.stdout.write(JSON.stringify(json) + '\n');
  } else {
    process.stdout.write('\n' + table + `\nsuite folder: ${out}\n`);
  }
  return rows.some((r) => r.correct) ? EXIT.ok : EXIT.notOk;
}
