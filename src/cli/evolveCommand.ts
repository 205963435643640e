// `kernelevolve evolve`: runs the search headless. Progress goes to stderr; stdout gets the leaderboard and
// the best variant's diff, or with --json exactly one JSON object (docs/engine.md).
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Candidate } from '../engine/candidate';
import type { TerminationReason } from '../engine/events';
import { isConfirmed } from '../engine/candidateStore';
import { RunStore, RunStoreError, type LoadedRun } from '../engine/runStore';
import { POLICIES } from '../engine/selection';
import { formatSpeedup, scoreInterval, scoreOf, SPEEDUP_MEANING } from '../engine/pairedScore';
import { OPERATOR_NAMES, unknownOperators } from '../run/operatorRegistry';
import { isPolicy, type RunSettings } from '../run/runSettings';
import { startRun, type StartedRun } from '../run/startRun';
import { CliError, EXIT } from './cliError';
import { hardwareReport } from './hardwareReport';
import { shapeReport } from './shapeReport';
import { bestDiff, leaderboard, reasonText, usageText } from './evolveReport';
import { EvolveProgress } from './evolveProgress';
import { inputsOption } from './inputsOption';
import { cliHostOptions } from './sshPrompts';

export const EVOLVE_USAGE = `usage: kernelevolve evolve --spec SPEC.py [--operators tune,llm] [--budget N] [--time MIN] [--host NAME ...]
                          [--config FILE] [--model M] [--json] [--out DIR] [--resume RUNDIR]
                          [--policy greedy|ucb|islands] [--target X] [--plateau N] [--seed N]
                          [--draft-budget N] [--job-timeout S] [--profile] [--inputs wide|problem]`;

function positiveNumber(flag: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new CliError(`--${flag} must be a positive ${integer ? 'whole number' : 'number'}, not "${text}".`);
  }
  return n;
}

export async function evolveCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      spec: { type: 'string' },
      operators: { type: 'string' },
      budget: { type: 'string' },
      time: { type: 'string' },
      host: { type: 'string', multiple: true },
      config: { type: 'string' },
      model: { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      resume: { type: 'string' },
      policy: { type: 'string' },
      target: { type: 'string' },
      plateau: { type: 'string' },
      seed: { type: 'string' },
      'draft-budget': { type: 'string' },
      'job-timeout': { type: 'string' },
      profile: { type: 'boolean' },
      inputs: { type: 'string' },
      'accept-new-host-key': { type: 'boolean', default: false },
    },
    strict: true,
  });
  // ---------------------------------------------------------------- what was given
  let stored: LoadedRun | undefined;
  if (values.resume) {
    try {
      stored = RunStore.load(values.resume);
    } catch (e) {
      if (e instanceof RunStoreError) throw new CliError(e.message);
      throw e;
    }
    if (values.out) throw new CliError('--out and --resume do not go together: a resumed run stays in its own folder.');
  } else if (!values.spec) {
    throw new CliError(`evolve needs --spec (or --resume RUNDIR).\n${EVOLVE_USAGE}`);
  }
  const given: Partial<RunSettings> = {
    operators: values.operators?.split(',').map((s) => s.trim()).filter(Boolean),
    budget: positiveNumber('budget', values.budget, true),
    timeMin: positiveNumber('time', values.time, false),
    target: positiveNumber('target', values.target, false),
    plateau: positiveNumber('plateau', values.plateau, true),
    seed: values.seed !== undefined ? Number(values.seed) : undefined,
    model: values.model,
    hosts: values.host,
    config: values.config,
    draftBudget: positiveNumber('draft-budget', values['draft-budget'], true),
    jobTimeoutS: positiveNumber('job-timeout', values['job-timeout'], false),
    profile: values.profile,
    inputs: inputsOption(values.inputs),
  };
  if (given.seed !== undefined && !Number.isInteger(given.seed)) throw new CliError(`--seed must be a whole number, not "${values.seed}".`);
  if (values.policy !== undefined) {
    if (!isPolicy(values.policy)) throw new CliError(`--policy "${values.policy}" is not known; use one of ${POLICIES.join(', ')}.`);
    given.policy = values.policy;
  }
  if (given.operators) {
    const [unknown] = unknownOperators(given.operators);
    if (unknown) throw new CliError(`Unknown operator "${unknown}" in --operators; use a comma-separated list of ${OPERATOR_NAMES.join(', ')}.`);
    if (!given.operators.length) throw new CliError('--operators names no operator; use e.g. --operators tune or --operators tune,llm.');
  }

  // ---------------------------------------------------------------- the run
  const progress = new EvolveProgress(process.stderr);
  let finishedReason = 'error' as TerminationReason;
  let runError = undefined as { kind: string; message: string } | undefined;
  const stop = new AbortController();
  const quit = new AbortController();
  let started: StartedRun;
  try {
    started = await startRun({
      specPath: values.spec,
      resume: stored,
      settings: given,
      hostOptions: cliHostOptions({ acceptNewHostKey: values['accept-new-host-key'] }),
      out: values.out,
      onEvent: (e) => {
        progress.listener(e);
        if (e.type === 'run-finished') {
          finishedReason = e.reason;
          runError = e.error;
        }
      },
      signal: stop.signal,
      quit: quit.signal,
    });
  } catch (e) {
    if (e instanceof RunStoreError) throw new CliError(e.message);
    throw e;
  }
  const { run, spec, store } = started;

  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      process.stderr.write('\nstopping: cancelling what is in flight, judging the leaders once more and saving the run (Ctrl-C again to skip that)\n');
      stop.abort();
    } else if (interrupts === 2) {
      process.stderr.write('\nskipping the confirmation of the leaders (Ctrl-C again to quit at once)\n');
      quit.abort();
    } else {
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  let summary;
  try {
    summary = await started.finished;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }

  // ---------------------------------------------------------------- report
  const candidates = run.candidates;
  const baseline = candidates[0] as Candidate | undefined;
  const best = summary.best ? candidates.find((c) => c.id === summary.best!.id) : undefined;
  const improved = !!best && !!baseline && best.id !== baseline.id && scoreOf(best) > 0;
  const diff = improved ? bestDiff(baseline!, best!, spec.sourcePath) : '';
  if (diff) fs.writeFileSync(`${store.runDir}/best.diff`, diff);
  const report = [
    '',
    `run ${summary.runId} ended: ${reasonText(finishedReason)}${runError ? ` (${runError.message})` : ''}`,
    leaderboard(candidates),
    improved
      ? `\nbest: ${best!.id} by ${best!.operator}, ${formatSpeedup(scoreOf(best!), scoreInterval(best!))} over the baseline (${isConfirmed(best!) ? figureText(best!) : 'a single evaluation, not confirmed'})\n${SPEEDUP_MEANING}; 95% interval in brackets\n${shapeReport(best!)}\n\n${diff}`
      : '\nno correct candidate beat the baseline.',
    ...(store.current.usage ? [usageText(store.current.usage)] : []),
    ...(baseline ? [hardwareReport(summary.runDir, spec, baseline.source)].filter(Boolean) : []),
    `run folder: ${summary.runDir}${finishedReason === 'stopped' || finishedReason === 'time' || finishedReason === 'error' ? ` (continue with: kernelevolve evolve --resume ${summary.runDir})` : ''}`,
  ].join('\n');
  if (values.json) {
    const b = summary.baseline;
    process.stderr.write(report + '\n');
    process.stdout.write(JSON.stringify({
      runId: summary.runId,
      runDir: summary.runDir,
      candidates: summary.candidates,
      baseline: b ? { id: 'c0000', status: b.status, speedup: b.speedup, reason: b.reason } : null,
      best: summary.best ?? null,
      reason: finishedReason,
      ...(store.current.usage ? { usage: store.current.usage } : {}),
      ...(runError ? { error: runError } : {}),
    }) + '\n');
  } else {
    process.stdout.write(report + '\n');
  }

  if (finishedReason === 'stopped') return EXIT.interrupted;
  if (finishedReason === 'error') {
    if (runError?.kind === 'baseline') return EXIT.notOk;
    if (!values.json) process.stderr.write(`kernelevolve: ${runError?.message ?? 'the run failed'}\n`);
    return EXIT.hostFailure;
  }
  return improved ? EXIT.ok : EXIT.notOk;
}

/** What a confirmed best's figure is made of: the evaluations after the ranking picked it. */
function figureText(best: Candidate): string {
  const after = (best.confirmations ?? []).slice(best.figureFrom ?? 0);
  const figures = after.map((v) => `${v.speedup?.toFixed(2)}x`).join(', ');
  return `confirmed: the geometric mean of the ${after.length} evaluation${after.length === 1 ? '' : 's'} after it was picked, ${figures}; picked at ${best.verdict!.speedup?.toFixed(2)}x`;
}
