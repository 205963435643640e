// `kernelevolve evolve`: runs the search headless. Progress goes to stderr; stdout gets the leaderboard and
// the best variant's diff, or with --json exactly one JSON object (docs/engine.md).
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Candidate } from '../engine/candidate';
import type { TerminationReason } from '../engine/events';
import { EvolutionRun, isConfirmed } from '../engine/evolutionRun';
import type { Operator } from '../engine/operator';
import { RunStore, RunStoreError } from '../engine/runStore';
import { createPolicy, POLICIES } from '../engine/selection';
import { loadSpec, type KernelSpec } from '../engine/spec';
import type { TerminationLimits } from '../engine/termination';
import { TuneOperator } from '../engine/tuneOperator';
import { scoreOf } from '../engine/runReference';
import { createHosts, loadConfig, type KernelEvolveConfig } from '../remote/hostConfig';
import { HostPool } from '../remote/hostPool';
import '../remote/hosts';
import { CliError, EXIT } from './cliError';
import { bestDiff, leaderboard, reasonText, usageText } from './evolveReport';
import { EvolveProgress } from './evolveProgress';
import { cliHostOptions } from './sshPrompts';
import type { EngineEvent } from '../engine/events';

export const EVOLVE_USAGE = `usage: kernelevolve evolve --spec SPEC.py [--operators tune,llm] [--budget N] [--time MIN] [--host NAME ...]
                          [--config FILE] [--model M] [--json] [--out DIR] [--resume RUNDIR]
                          [--policy greedy|ucb|islands] [--target X] [--plateau N] [--seed N]
                          [--draft-budget N] [--job-timeout S] [--profile]`;

export const OPERATORS = ['tune', 'llm'] as const;
const DEFAULT_BUDGET = 40;

/** What a run was started with; stored in run.json and reused by --resume (flags given again override). */
export interface EvolveOptions {
  operators: string[];
  budget?: number;
  timeMin?: number;
  policy: string;
  target?: number;
  plateau?: number;
  seed?: number;
  model?: string;
  hosts: string[];
  config?: string;
  draftBudget?: number;
  jobTimeoutS: number;
  profile: boolean;
}

/** Everything an operator factory may need. */
export interface OperatorFactoryContext {
  spec: KernelSpec;
  options: EvolveOptions;
  config: KernelEvolveConfig;
  hardware?: string;
  /** Where an operator's own events go (the llm operator's retries and notices): the progress display. */
  onEvent?: (event: EngineEvent) => void;
}

function positiveNumber(flag: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new CliError(`--${flag} must be a positive ${integer ? 'whole number' : 'number'}, not "${text}".`);
  }
  return n;
}

/** The llm operator lives in its own module, loaded only when asked for. */
async function createLlmOperator(ctx: OperatorFactoryContext): Promise<Operator> {
  let mod: { createLlmOperator?: (ctx: OperatorFactoryContext) => Operator | Promise<Operator> };
  try {
    mod = await import('../engine/llm/llmOperator');
  } catch (e) {
    throw new CliError(`The llm operator is not available in this build (${(e as Error).message.split('\n')[0]}); use --operators tune.`);
  }
  if (typeof mod.createLlmOperator !== 'function') {
    throw new CliError('The llm operator module does not export createLlmOperator; use --operators tune.');
  }
  return mod.createLlmOperator(ctx);
}

export async function createOperators(ctx: OperatorFactoryContext): Promise<Operator[]> {
  const ops: Operator[] = [];
  for (const name of ctx.options.operators) {
    if (name === 'tune') ops.push(new TuneOperator({ fileName: ctx.spec.sourcePath, seed: ctx.options.seed }));
    else if (name === 'llm') ops.push(await createLlmOperator(ctx));
    else throw new CliError(`Unknown operator "${name}" in --operators; use a comma-separated list of ${OPERATORS.join(', ')}.`);
  }
  if (!ops.length) throw new CliError(`--operators names no operator; use e.g. --operators tune or --operators tune,llm.`);
  return ops;
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
      'accept-new-host-key': { type: 'boolean', default: false },
    },
    strict: true,
  });
  // ---------------------------------------------------------------- options, spec, store
  let stored: ReturnType<typeof RunStore.load> | undefined;
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
  const previous = (stored?.record.options ?? {}) as Partial<EvolveOptions>;
  const options: EvolveOptions = {
    operators: values.operators ? values.operators.split(',').map((s) => s.trim()).filter(Boolean) : previous.operators ?? ['tune'],
    budget: positiveNumber('budget', values.budget, true) ?? previous.budget ?? (values.time ? undefined : DEFAULT_BUDGET),
    timeMin: positiveNumber('time', values.time, false) ?? previous.timeMin,
    policy: values.policy ?? previous.policy ?? 'greedy',
    target: positiveNumber('target', values.target, false) ?? previous.target,
    plateau: positiveNumber('plateau', values.plateau, true) ?? previous.plateau,
    seed: values.seed !== undefined ? Number(values.seed) : previous.seed,
    model: values.model ?? previous.model,
    hosts: values.host ?? previous.hosts ?? [],
    config: values.config ?? previous.config,
    draftBudget: positiveNumber('draft-budget', values['draft-budget'], true) ?? previous.draftBudget,
    jobTimeoutS: positiveNumber('job-timeout', values['job-timeout'], false) ?? previous.jobTimeoutS ?? 900,
    profile: values.profile ?? previous.profile ?? false,
  };
  if (options.seed !== undefined && !Number.isInteger(options.seed)) throw new CliError(`--seed must be a whole number, not "${values.seed}".`);
  if (!(POLICIES as readonly string[]).includes(options.policy)) {
    throw new CliError(`--policy "${options.policy}" is not known; use one of ${POLICIES.join(', ')}.`);
  }
  for (const op of options.operators) {
    if (!(OPERATORS as readonly string[]).includes(op)) {
      throw new CliError(`Unknown operator "${op}" in --operators; use a comma-separated list of ${OPERATORS.join(', ')}.`);
    }
  }
  const spec = await loadSpec(stored ? stored.record.spec.specPath : values.spec!);
  const baselineSource = stored?.candidates.find((c) => c.id === 'c0000')?.source ?? fs.readFileSync(spec.sourcePath, 'utf8');
  const config = await loadConfig(options.config);
  if (options.model) config.llm = { ...config.llm, model: options.model };
  const hosts = createHosts(config, options.hosts, cliHostOptions({ acceptNewHostKey: values['accept-new-host-key'] }));
  if (!hosts.length) throw new CliError('The config lists no hosts; add {"name": "local", "type": "local"} to "hosts".');

  const progress = new EvolveProgress(process.stderr);
  const pool = new HostPool(hosts, {
    onHostFailure: (host, e) => progress.listener({ type: 'log', level: 'warn', message: `host ${host} failed (${e.message}); its job goes back to the queue`, at: Date.now() }),
  });
  const operators = await createOperators({ spec, options, config, hardware: pool.hardware, onEvent: progress.listener }).catch(async (e) => {
    await pool.dispose();
    throw e;
  });
  const hostInfo = pool.hosts.map((h) => ({ name: h.name, slots: h.slots, ...(h.hardware ? { hardware: h.hardware } : {}) }));
  let store: RunStore;
  try {
    store = stored?.store ?? RunStore.create({ spec, options: { ...options }, hosts: hostInfo, out: values.out });
  } catch (e) {
    await pool.dispose();
    if (e instanceof RunStoreError) throw new CliError(e.message);
    throw e;
  }
  if (stored) store.update({ options: { ...options }, hosts: hostInfo });
  // Hosts with machinery of their own (Slurm jobs started, ended, requeues) report it as the run's log.
  for (const h of hosts) h.onLog?.((level, message) => [progress.listener, store.listener].forEach((l) => l({ type: 'log', level, message, at: Date.now() })));

  const limits: TerminationLimits = {
    budget: options.budget,
    timeS: options.timeMin !== undefined ? options.timeMin * 60 : undefined,
    plateau: options.plateau,
    target: options.target,
  };
  const stop = new AbortController();
  const quit = new AbortController();
  const run = new EvolutionRun({
    runId: store.runId,
    runDir: store.runDir,
    spec,
    baselineSource,
    operators,
    evaluator: pool,
    policy: createPolicy(options.policy),
    limits,
    draftBudget: options.draftBudget,
    // an LLM answers slowly: keep more proposals in flight so the hosts never wait for it
    pipelineDepth: options.operators.includes('llm') ? 2 * pool.totalSlots : pool.totalSlots,
    resume: stored ? { candidates: stored.candidates, used: stored.record.counters.used, duplicates: stored.record.counters.duplicates, invalid: stored.invalid.length } : undefined,
    signal: stop.signal,
    quit: quit.signal,
    jobTimeoutS: options.jobTimeoutS,
    profile: options.profile,
  });
  run.on(store.listener);
  run.on(progress.listener);
  let finishedReason = 'error' as TerminationReason;
  let runError = undefined as { kind: string; message: string } | undefined;
  run.on((e) => {
    if (e.type === 'run-finished') {
      finishedReason = e.reason;
      runError = e.error;
    }
  });

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
    summary = await run.run();
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    await pool.dispose();
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
      ? `\nbest: ${best!.id} by ${best!.operator}, ${scoreOf(best!).toFixed(2)}x over the baseline (${isConfirmed(best!) ? `confirmed: the lower of its ${1 + best!.confirmations!.length} measurements, ` : 'a single measurement, not confirmed; '}geometric mean over shapes, against the median of the run's baseline timings; the harness measured ${[best!.verdict!, ...(best!.confirmations ?? [])].map((v) => `${v.speedup?.toFixed(2)}x`).join(' and ')} in its own evaluation${best!.confirmations?.length ? 's' : ''})\n\n${diff}`
      : '\nno correct candidate beat the baseline.',
    ...(store.current.usage ? [usageText(store.current.usage)] : []),
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
