// `kernelevolve suite DIR`: every KernelBench-format problem under DIR (level subfolders too) evolved with the same
// per-problem budget, then the best correct ModelNew judged once more against the problem's Model under
// torch.compile (GPU problems), and one table: correct, speedup over eager (ours and KernelBench's timing) and over
// torch.compile, fast_p, tokens, seconds of evaluation and of wall time. With --self-judge, each problem's Model is
// judged against itself instead (no search): the harness's own check over a whole level. Each problem runs as
// `kernelevolve evolve` (or `evaluate`) in a child process of this same CLI (its messages in the problem's log.txt,
// its result read from its --json line and its run folder), so one problem's failure is a row, not the end of the
// suite; a finished problem's row is kept in its folder, so an interrupted suite run again finishes the rest
// (suiteFolder.ts).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { problemBackend } from '../engine/kernelBenchProblem';
import { figureVerdicts, geometricMean, pairedScore } from '../engine/pairedScore';
import { RunStore } from '../engine/runStore';
import { CliError, EXIT } from './cliError';
import { inputsOption } from './inputsOption';
import { finishedRow, openSuiteFolder, recordFinished, recordSession, storedArgs, type SuiteArgs } from './suiteFolder';
import { findProblems, type SuiteProblem } from './suiteProblems';
import { SuiteProgress } from './suiteProgress';
import { equalShare, grownShare, neededShare, ShareQueue, SIDE_BY_SIDE } from './suiteShares';
import { selfJudgeJson, selfJudgeTable, suiteJson, suiteTable, withinSelfTolerance, type SelfJudgement, type SuiteRow } from './suiteReport';

export const SUITE_USAGE = `usage: kernelevolve suite DIR [--budget N] [--operators tune,llm] [--model M] [--host NAME ...]
                         [--config FILE] [--json] [--out DIR] [--compile all|none|N] [--time MIN] [--inputs wide|problem]
                         [--self-judge [--jobs N]]
       kernelevolve suite --resume OUT [--host NAME ...] [--config FILE] [--jobs N] [--json]`;

/** The line that makes a problem's copy the torch.compile baseline (harness model_problem.py reads it). */
const COMPILE_MARKER = '\n\n# The problem\'s Model under torch.compile: the second baseline of `kernelevolve suite`.\nTORCH_COMPILE = True\n';

interface ChildResult {
  code: number | null;
  stdout: string;
  /** The child was stopped by the suite (an interrupted suite): its result is not a row. */
  stopped: boolean;
}

/** The running children: the suite stops them when it is interrupted. */
const running = new Set<{ stop(): void; kill(): void }>();

/** This CLI again, as a child (the bundle exports main: dist/cli.js, or a test's bundle). Its messages go to `log`.
 *  It runs in a process group of its own, so a Ctrl-C reaches the suite, which stops it as a second Ctrl-C would
 *  (the run saved, the leaders not judged again); and it ends when the suite's end of its stdin closes, so a suite
 *  killed outright leaves no child judging on. */
function runSelf(args: string[], log: string): Promise<ChildResult> {
  const script = `process.stdin.on('end', () => process.exit(${EXIT.interrupted})); process.stdin.on('error', () => process.exit(${EXIT.interrupted})); ` +
    `process.stdin.resume(); process.stdin.unref(); require(${JSON.stringify(__filename)}).main(process.argv.slice(1)).then((c) => { process.exitCode = c; })`;
  return new Promise((resolve) => {
    const err = fs.openSync(log, 'a');
    const child = spawn(process.execPath, ['-e', script, ...args], { stdio: ['pipe', 'pipe', err], detached: true });
    fs.closeSync(err);
    let stdout = '';
    let stopped = false;
    const handle = {
      stop: () => {
        stopped = true;
        child.kill('SIGINT');
        setTimeout(() => child.kill('SIGINT'), 200).unref();
      },
      kill: () => {
        stopped = true;
        child.kill('SIGKILL');
      },
    };
    running.add(handle);
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => {
      running.delete(handle);
      resolve({ code, stdout, stopped });
    });
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
export function bestCorrect(runDir: string): { id: string; speedup: number; kernelbench?: number } | undefined {
  let loaded: ReturnType<typeof RunStore.load>;
  try {
    loaded = RunStore.load(runDir);
  } catch {
    return undefined;
  }
  const correct = loaded.candidates.filter((c) => c.id !== 'c0000' && c.verdict?.status === 'ok' && pairedScore(c) > 0);
  const named = loaded.record.best?.id;
  const pick = correct.find((c) => c.id === named) ?? correct.sort((a, b) => pairedScore(b) - pairedScore(a))[0];
  if (!pick) return undefined;
  // KernelBench's timing of the same evaluations its figure comes from
  const kb = figureVerdicts(pick).map((v) => v.kernelbench?.speedup).filter((k): k is number => typeof k === 'number' && k > 0);
  const kernelbench = kb.length && kb.length === figureVerdicts(pick).length
    ? geometricMean(kb) : undefined;
  return { id: pick.id, speedup: pairedScore(pick), ...(kernelbench !== undefined ? { kernelbench } : {}) };
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
      resume: { type: 'string' },
      compile: { type: 'string' },
      time: { type: 'string' },
      'self-judge': { type: 'boolean' },
      jobs: { type: 'string' },
      inputs: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  let args: SuiteArgs;
  let out: string;
  if (values.resume) {
    out = path.resolve(values.resume);
    const stored = storedArgs(out);
    if (!stored) throw new CliError(`${values.resume} holds no suite to resume (no suite-args.json); give the --out folder of an earlier \`kernelevolve suite\`.`);
    if (positionals.length || values.out) throw new CliError(`--resume takes the suite's folder and options as they were; give neither DIR nor --out with it.\n${SUITE_USAGE}`);
    args = { ...stored, host: values.host ?? stored.host, config: values.config ?? stored.config };
  } else {
    const dir = positionals[0];
    if (!dir || positionals.length > 1) throw new CliError(`suite needs one folder of problems.\n${SUITE_USAGE}`);
    args = {
      dir: path.resolve(dir), selfJudge: !!values['self-judge'], budget: values.budget, operators: values.operators, model: values.model,
      time: values.time, compile: values.compile ?? 'all', inputs: inputsOption(values.inputs), host: values.host, config: values.config,
    };
    out = path.resolve(values.out ?? path.join('.kernelevolve', 'suites', new Date().toISOString().replace(/[:.]/g, '-')));
  }
  const jobs = values.jobs === undefined ? 1 : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) throw new CliError(`--jobs is how many problems are judged at once, a whole number from 1; got "${values.jobs}".`);
  if (jobs > 1 && !args.selfJudge) {
    throw new CliError('--jobs judges problems side by side with --self-judge; an evolving suite runs one problem at a time, each using every slot of its hosts.');
  }
  let problems: SuiteProblem[];
  try {
    problems = findProblems(args.dir, out);
  } catch {
    throw new CliError(`Cannot read the folder ${args.dir}; give the folder that holds the problem files.`);
  }
  if (!problems.length) {
    throw new CliError(`${args.dir} holds no KernelBench-format problem (a .py file defining class Model, get_inputs() and get_init_inputs()).`);
  }
  const compileLimit = args.compile === 'all' ? Infinity : args.compile === 'none' ? 0 : Number(args.compile);
  if (!Number.isInteger(compileLimit) && compileLimit !== Infinity) throw new CliError(`--compile must be all, none or a number of problems, not "${args.compile}".`);
  const { resumed } = openSuiteFolder(out, args);

  const finished = new Map(problems.map((p) => [p.name, finishedRow<SuiteRow & SelfJudgement>(path.join(out, p.name))]));
  const left = problems.filter((p) => !finished.get(p.name));
  const progress = new SuiteProgress(process.stderr, problems.length, problems.length - left.length);
  progress.note(resumed
    ? `resuming the suite in ${out}: ${problems.length - left.length} of ${problems.length} problems finished before, ${left.length} to go`
    : `suite of ${problems.length} problems in ${out} (if it is interrupted, the same command or \`kernelevolve suite --resume ${out}\` finishes it)`);

  let interrupted = 0;
  const onInterrupt = () => {
    interrupted++;
    if (interrupted === 1) {
      progress.note('stopping: the problem being judged is stopped and will be done again when the suite is resumed (Ctrl-C again to quit at once)');
      for (const r of running) r.stop();
    } else {
      for (const r of running) r.kill();
    }
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  const hostArgs = [...(args.host ?? []).flatMap((h) => ['--host', h]), ...(args.config ? ['--config', args.config] : [])];
  // problems judged against torch.compile so far, finished ones included (--compile N counts over the whole suite)
  let compiled = [...finished.values()].filter((r) => r?.speedupCompile !== undefined).length;
  const sessionStart = Date.now();
  const record = (problem: SuiteProblem, row: SuiteRow | SelfJudgement) => {
    recordFinished(path.join(out, problem.name), row);
    finished.set(problem.name, row as SuiteRow & SelfJudgement);
    progress.finished(problem.name, args.selfJudge ? selfLine(row as SelfJudgement) : evolveLine(row as SuiteRow), row.wallSeconds ?? 0);
  };
  try {
    if (args.selfJudge) {
      await selfJudgeAll(left, { out, jobs, passOn: [...inputsArgs(args), ...hostArgs], progress, stopped: () => interrupted > 0, record });
    } else {
      await evolveAll();
    }
  } finally {
    progress.stop();
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }

  async function evolveAll(): Promise<void> {
    for (const problem of left) {
      if (interrupted) break;
      const folder = path.join(out, problem.name);
      progress.started(problem.name);
      const t0 = Date.now();
      const compile = problemBackend(fs.readFileSync(problem.file, 'utf8')) === 'model-cuda' && compiled < compileLimit;
      const row = await evolveProblem(problem, folder, args, hostArgs, compile);
      if (row && row.speedupCompile !== undefined) compiled++;
      if (!row || interrupted) break;
      row.wallSeconds = (Date.now() - t0) / 1000;
      record(problem, row);
    }
  }

  const rows = problems.map((p) => finished.get(p.name)).filter((r): r is SuiteRow & SelfJudgement => !!r);
  // with problems side by side, their own wall times add up to more than the suite took
  const elapsedSeconds = (Date.now() - sessionStart) / 1000;
  const session = { elapsedSeconds, jobs, sessionsSeconds: recordSession(out, elapsedSeconds) };
  const table = args.selfJudge ? selfJudgeTable(rows, session) : suiteTable(rows);
  const json = { ...(args.selfJudge ? selfJudgeJson(rows, session) : suiteJson(rows)), out, total: problems.length, finished: rows.length };
  fs.writeFileSync(path.join(out, 'suite.json'), JSON.stringify(json, null, 2) + '\n');
  fs.writeFileSync(path.join(out, 'suite.txt'), table + '\n');
  const unfinished = rows.length < problems.length
    ? `\ninterrupted: ${rows.length} of ${problems.length} problems finished; run the same command again (or \`kernelevolve suite --resume ${out}\`) to finish the rest\n` : '';
  if (values.json) {
    process.stderr.write('\n' + table + '\n' + unfinished);
    process.stdout.write(JSON.stringify(json) + '\n');
  } else {
    process.stdout.write('\n' + table + `\nsuite folder: ${out}\n` + unfinished);
  }
  if (rows.length < problems.length) return EXIT.interrupted;
  if (args.selfJudge) return rows.every((r) => r.status === 'ok') ? EXIT.ok : EXIT.notOk;
  return rows.some((r) => r.correct) ? EXIT.ok : EXIT.notOk;
}

const evolveLine = (r: SuiteRow) => (r.correct ? `correct, ${r.speedupEager!.toFixed(2)}x` : `no correct kernel${r.note ? ` (${r.note.slice(0, 60)})` : ''}`);
const selfLine = (r: SelfJudgement) => (r.status === 'ok' ? `ok ${r.speedup!.toFixed(3)}x against itself` : `${r.status}: ${r.reason.slice(0, 80)}`);

/** Judges the problems' own Models against themselves, `jobs` at a time. Side by side, each evaluation keeps to
 *  its share of the device's memory (`--memory-share`: 95% of it over `jobs`, suiteShares.ts). One the harness
 *  refuses there for memory is given the share its refusal says it needs, beside the others, where that is at most
 *  95% of the device; one that ran out of memory at run time, a larger share once. One that needs more than 95%,
 *  or ran out of memory again, is judged again alone, with the whole device, once the others are done, and its row
 *  says so. So is one that read outside 1.00 +- SELF_TOLERANCE beside others, or was not ok there: the timing lock
 *  keeps other evaluations' timed sections apart, not their checks, and on the H200 a problem judged beside five
 *  others read 0.893x, 0.954x and 1.097x where alone it read 1.000x, 1.000x and 1.001x; and cuDNN picks its TF32
 *  convolutions' algorithms by the workspace it can have, so with the device's memory shared the Model's two
 *  processes (the reference and the candidate) can compute one convolution with different roundings (KernelBench's
 *  conv-transposed problems 68 and 69 and conv 76 beside others: 17.9M of 312M elements off by up to 3.8e-4, where
 *  the float32 tolerance is 1e-4). The row keeps what it read beside others (`besideOthers` and
 *  verdict-beside-others.json), so what the harness showed there is never lost. */
async function selfJudgeAll(left: SuiteProblem[], o: {
  out: string;
  jobs: number;
  passOn: string[];
  progress: SuiteProgress;
  stopped: () => boolean;
  record: (problem: SuiteProblem, row: SelfJudgement) => void;
}): Promise<void> {
  const share = equalShare(o.jobs);
  const alone: SuiteProblem[] = [];
  // the log of each first try beside others, kept beside the second try's (`log-beside-others.txt`; its verdict
  // too where it read outside the tolerance, `verdict-beside-others.json`)
  const besideLogs = new Map<string, string>();
  // what a problem set aside to be judged alone read beside others (a figure outside the tolerance, a status
  // other than ok, or out of memory), and that verdict
  const besideFirst = new Map<string, { speedup?: number; status: string; memory: boolean; verdict: string }>();
  // the larger share a problem was given after its first share was too little
  const grown = new Map<string, { from: number; to: number }>();
  const queue = new ShareQueue<SuiteProblem>(o.jobs);
  const judge = async (problem: SuiteProblem, given: number | undefined): Promise<void> => {
    const folder = path.join(o.out, problem.name);
    o.progress.started(problem.name);
    const t0 = Date.now();
    const row = await selfJudge(problem, folder, [...o.passOn, ...(given ? ['--memory-share', String(given)] : [])]);
    if (!row || o.stopped()) return;
    row.wallSeconds = (Date.now() - t0) / 1000;
    const drifted = row.status === 'ok' && !withinSelfTolerance(row);
    const beside = given !== undefined;
    if (beside && (row.status !== 'ok' || drifted)) {
      besideLogs.set(problem.name, readText(path.join(folder, 'log.txt')));
      const memory = !drifted && outOfMemory(row, folder);
      const refused = memory ? neededShare(`${row.reason}\n${besideLogs.get(problem.name)}`) : undefined;
      // refused within its share: the share it needs; out of memory at run time: more than it had, once
      const needs = !memory ? undefined : refused !== undefined ? Math.max(refused, given) : grownShare(given);
      if (needs !== undefined && needs <= SIDE_BY_SIDE && !grown.has(problem.name)) {
        grown.set(problem.name, { from: given, to: needs });
        queue.add(problem, needs, refused !== undefined);
        o.progress.setAside(problem.name, refused !== undefined
          ? `${problem.name}: does not fit in ${given} of the device's memory (${row.wallSeconds.toFixed(1)} s); judged again beside others with the ${needs.toFixed(2)} it needs`
          : `${problem.name}: out of memory beside others with ${given} of the device's memory (${row.wallSeconds.toFixed(1)} s); judged again beside others with ${needs.toFixed(2)}`);
        return;
      }
      alone.push(problem);
      besideFirst.set(problem.name, { speedup: row.speedup, status: row.status, memory, verdict: readText(path.join(folder, 'verdict.json')) });
      const why = drifted ? `read ${row.speedup!.toFixed(3)}x against itself beside others`
        : memory ? 'out of memory beside others' : `${row.status} beside others`;
      o.progress.setAside(problem.name, `${problem.name}: ${why} (${row.wallSeconds.toFixed(1)} s); judged again alone once the others are done`);
      return;
    }
    const more = grown.get(problem.name);
    const grew = more ? `with ${more.to.toFixed(2)} of the device's memory after ${more.from} was too little` : '';
    if (beside && more) row.reason = `judged beside others ${grew}; ${row.reason}`;
    if (!beside && share) {
      const first = besideFirst.get(problem.name)!;
      row.reason = (first.status === 'ok' ? `judged alone after reading ${first.speedup!.toFixed(3)}x against itself beside others`
        : first.memory ? 'judged alone after running out of memory beside others' : `judged alone after it was ${first.status} beside others`)
        + (more ? ` (${grew})` : '') + `; ${row.reason}`;
      fs.writeFileSync(path.join(folder, 'log-beside-others.txt'), besideLogs.get(problem.name) ?? '');
      if (first.status === 'ok') row.besideOthers = first.speedup;
      if (first.verdict) fs.writeFileSync(path.join(folder, 'verdict-beside-others.json'), first.verdict);
    }
    o.record(problem, row);
  };
  if (share === undefined) {
    for (const problem of left) {
      if (o.stopped()) break;
      await judge(problem, undefined);
    }
    return;
  }
  for (const problem of left) queue.add(problem, share);
  const inFlight = new Set<Promise<void>>();
  while ((queue.size || inFlight.size) && !o.stopped()) {
    for (let next = queue.next(); next && !o.stopped(); next = queue.next()) {
      const { item, share: given } = next;
      const p: Promise<void> = judge(item, given).finally(() => {
        queue.done(item);
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    if (inFlight.size) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  for (const problem of alone) {
    if (o.stopped()) break;
    await judge(problem, undefined);
  }
}

/** The evaluation ran out of memory, or was refused for it: its verdict or its log says so. */
function outOfMemory(row: SelfJudgement, folder: string): boolean {
  const log = readText(path.join(folder, 'log.txt'));
  return /out of memory|OutOfMemory|does not fit in this (?:GPU|machine|device)/i.test(`${row.reason}\n${log}`);
}

/** A file's text, or '' where there is none. */
function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** One problem evolved (its run resumed when an interrupted suite left it unfinished); undefined when stopped. */
async function evolveProblem(problem: SuiteProblem, folder: string, args: SuiteArgs, hostArgs: string[], compile: boolean): Promise<SuiteRow | undefined> {
  const name = problem.name;
  const runDir = path.join(folder, 'run');
  const log = path.join(folder, 'log.txt');
  let unfinishedRun = false;
  try {
    RunStore.load(runDir);
    unfinishedRun = true;
  } catch {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  fs.mkdirSync(folder, { recursive: true });
  const passOn = [
    ...(args.budget ? ['--budget', args.budget] : []),
    ...(args.time ? ['--time', args.time] : []),
    ...(args.operators ? ['--operators', args.operators] : []),
    ...(args.model ? ['--model', args.model] : []),
    ...inputsArgs(args),
  ];
  const evolved = await runSelf(unfinishedRun
    ? ['evolve', '--resume', runDir, '--json', ...hostArgs]
    : ['evolve', '--spec', problem.file, '--json', '--out', runDir, ...passOn, ...hostArgs], log);
  if (evolved.stopped) return undefined;
  const result = lastJson(evolved.stdout);
  const judged = judgements(runDir);
  const row: SuiteRow = {
    problem: name, correct: false, tokens: (result?.usage?.promptTokens ?? 0) + (result?.usage?.completionTokens ?? 0),
    evalSeconds: judged.reduce((s, j) => s + j.totalS, 0), candidates: judged.filter((j) => j.id !== 'c0000').length, runDir,
  };
  const best = bestCorrect(runDir);
  if (!result) row.note = `evolve exited ${evolved.code} without a result (see ${log})`;
  else if (result.baseline && result.baseline.status !== 'ok') row.note = `the problem itself failed: ${result.baseline.reason ?? result.baseline.status}`;
  if (best) {
    row.correct = true;
    row.speedupEager = best.speedup;
    if (best.kernelbench !== undefined) row.kernelbench = best.kernelbench;
    row.bestId = best.id;
    const base = path.basename(name);
    row.kernelFile = path.join(folder, `${base}_new.py`);
    fs.copyFileSync(path.join(runDir, 'candidates', `${best.id}.py`), row.kernelFile);
    if (compile) {
      const compileBaseline = path.join(folder, `${base}_compiled.py`);
      fs.writeFileSync(compileBaseline, fs.readFileSync(problem.file, 'utf8') + COMPILE_MARKER);
      fs.appendFileSync(log, `${name}: judging ${best.id} against the Model under torch.compile\n`);
      const ev = await runSelf(['evaluate', '--spec', problem.file, '--candidate', row.kernelFile, '--baseline', compileBaseline, '--json', ...inputsArgs(args), ...hostArgs], log);
      if (ev.stopped) return undefined;
      const v = lastJson(ev.stdout);
      if (v?.status === 'ok' && typeof v.speedup === 'number') row.speedupCompile = v.speedup;
      else row.note = `against torch.compile: ${v ? `${v.status}: ${v.reason}` : `evaluate exited ${ev.code}`}`;
      row.evalSeconds += Number(v?.stages?.total_s ?? 0);
    }
  } else if (!row.note) {
    const last = [...judged].reverse().find((j) => j.id !== 'c0000');
    row.note = last ? `${last.status}: ${last.reason ?? ''}` : 'no candidate was judged';
  }
  return row;
}

/** The problem's Model judged as the candidate against itself (no search): ok at 1.00 when the harness is right. */
async function selfJudge(problem: SuiteProblem, folder: string, passOn: string[]): Promise<SelfJudgement | undefined> {
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { recursive: true });
  const log = path.join(folder, 'log.txt');
  const ev = await runSelf(['evaluate', '--spec', problem.file, '--candidate', problem.file, '--json', ...passOn], log);
  if (ev.stopped) return undefined;
  const v = lastJson(ev.stdout);
  if (v) fs.writeFileSync(path.join(folder, 'verdict.json'), JSON.stringify(v, null, 2) + '\n');
  const iv = v?.speedup_interval;
  return {
    problem: problem.name,
    status: v?.status ?? 'error',
    ...(typeof v?.speedup === 'number' ? { speedup: v.speedup } : {}),
    ...(Array.isArray(iv) && iv.length === 2 ? { interval: [iv[0], iv[1]] as [number, number] } : {}),
    ...(typeof v?.kernelbench?.speedup === 'number' ? { kernelbench: v.kernelbench.speedup } : {}),
    reason: v?.reason ?? `evaluate exited ${ev.code} without a verdict (see ${log})`,
    evalSeconds: Number(v?.stages?.total_s ?? 0),
    wallSeconds: 0,
  };
}

/** `--inputs` as the suite was given it, for each evaluate and evolve it runs. */
function inputsArgs(args: SuiteArgs): string[] {
  return args.inputs ? ['--inputs', args.inputs] : [];
}
