// The one way a run starts, for the CLI and the editor alike: settings resolved (runSettings.ts), the spec
// and baseline read, hosts pooled, operators made (operatorRegistry.ts), the run stored, and the engine's
// EvolutionRun started over them. The front ends only say what they were given and render the events.
import { promises as fs } from 'node:fs';
import { ConfigError } from '../contract/config';
import type { HostSummary } from '../contract/hardware';
import type { Candidate } from '../engine/candidate';
import type { EngineEvent, EngineEventListener, RunSummary } from '../engine/events';
import { candidateId } from '../engine/candidateStore';
import { EvolutionRun, type EvolutionOptions } from '../engine/evolutionRun';
import { KernelLocator } from '../engine/kernelLocator';
import { RunStore, type LoadedRun } from '../engine/runStore';
import { createPolicy } from '../engine/selection';
import type { KernelSpec } from '../engine/spec';
import { createHosts, loadConfig, NO_HOSTS, type HostOptions, type KernelEvolveConfig } from '../remote/hostConfig';
import { HostPool } from '../remote/hostPool';
import '../remote/hosts';
import { describeSpec, kernelSpecOf } from '../remote/specDescription';
import { createOperators } from './operatorRegistry';
import { pipelineDepth, resolveRunSettings, type RunSettings } from './runSettings';

export interface RunRequest {
  /** The spec of a new run (ignored when resuming: the stored run names its own). */
  specPath?: string;
  /** A stored run to continue, already opened with RunStore.load. */
  resume?: LoadedRun;
  /** What the front end was given (flags, settings); the rest comes from the stored run or the defaults. */
  settings: Partial<RunSettings>;
  /** The config as the front end holds it (the editor's settings); else read from `settings.config`. */
  config?: KernelEvolveConfig;
  llmEndpoint?: { baseURL?: string; apiKey?: string };
  hostOptions?: HostOptions;
  /** A new run's folder (the CLI's --out); else `<workspace>/.kernelevolve/runs/<runId>/`. */
  out?: string;
  /** The workspace whose run store holds the run and the past wins; default: the current directory. */
  workspace?: string;
  /** Every event of the run, the hosts' news included; the run store has them first. */
  onEvent: EngineEventListener;
  signal?: AbortSignal;
  /** A harder stop: the run ends without judging its leaders again. */
  quit?: AbortSignal;
}

/** What the engine was given, resolved: the same for every front end given the same request. */
export interface RunPlan {
  settings: RunSettings;
  pipelineDepth: number;
  limits: EvolutionOptions['limits'];
  hosts: HostSummary[];
  resume?: { used: number; duplicates: number; invalid: number; candidates: number };
}

export interface StartedRun {
  readonly spec: KernelSpec;
  readonly store: RunStore;
  readonly run: EvolutionRun;
  readonly plan: RunPlan;
  /** Resolves when the run has ended and its hosts are given back. */
  readonly finished: Promise<RunSummary>;
}

/** The baseline is c0000 of a stored run, else the spec's SOURCE as it stands. */
async function baselineSourceOf(spec: KernelSpec, stored: Candidate[] | undefined): Promise<string> {
  return stored?.find((c) => c.id === candidateId(0))?.source ?? fs.readFile(spec.sourcePath, 'utf8');
}

/**
 * Prepares and starts one run; resolves once it is running. Throws (ConfigError, SpecError, RunStoreError,
 * or the error of a host that cannot be made) before anything is stored when the request cannot run.
 */
export async function startRun(req: RunRequest): Promise<StartedRun> {
  const stored = req.resume;
  const settings = resolveRunSettings(req.settings, (stored?.record.options ?? {}) as Partial<RunSettings>);
  const specPath = stored?.record.spec.specPath ?? req.specPath;
  if (!specPath) throw new Error('startRun needs a spec path or a stored run to resume.');
  // The harness reads the spec (describe-spec): a spec it would refuse is refused here, before anything runs.
  const description = await describeSpec(specPath);
  const spec = kernelSpecOf(description);
  // the tuner and the LLM operator find functions with tree-sitter, whose grammars load once per process
  await KernelLocator.get();
  const baselineSource = await baselineSourceOf(spec, stored?.candidates);
  const config = { ...(req.config ?? await loadConfig(settings.config)) };
  // An in-house accelerator's notes, named by its toolchain, are read like the user's own knowledge folders.
  const toolchainNotes = description.toolchain?.knowledge;
  if (toolchainNotes && !config.knowledge?.includes(toolchainNotes)) config.knowledge = [toolchainNotes, ...(config.knowledge ?? [])];
  const specHardware = description.toolchain?.hardware ?? undefined;
  if (settings.model) config.llm = { ...config.llm, model: settings.model };

  // Until the store exists, the run's news goes to the front end alone; after, to the store first.
  const listeners: EngineEventListener[] = [req.onEvent];
  const emit = (e: EngineEvent) => listeners.forEach((l) => l(e));
  const log = (level: 'info' | 'warn' | 'error', message: string) => emit({ type: 'log', level, message, at: Date.now() });

  const hosts = createHosts(config, settings.hosts, req.hostOptions);
  if (!hosts.length) throw new ConfigError(NO_HOSTS);
  const pool = new HostPool(hosts, { onHostFailure: (host, e) => log('warn', `host ${host} failed (${e.message}); its job goes back to the queue`) });
  let store: RunStore;
  let run: EvolutionRun;
  const hostSummaries = pool.hosts.map((h) => ({ name: h.name, slots: h.slots, ...(h.hardware ? { hardware: h.hardware } : {}) }));
  const plan: RunPlan = {
    settings,
    pipelineDepth: pipelineDepth(settings.operators, pool.totalSlots),
    limits: {
      budget: settings.budget,
      timeS: settings.timeMin !== undefined ? settings.timeMin * 60 : undefined,
      plateau: settings.plateau,
      target: settings.target,
    },
    hosts: hostSummaries,
    ...(stored ? { resume: { ...stored.record.counters, candidates: stored.candidates.length } } : {}),
  };
  try {
    const operators = await createOperators({
      spec, settings, config, llmEndpoint: req.llmEndpoint, hardware: pool.hardware ?? specHardware,
      workspaceDir: req.workspace ?? process.cwd(), runDir: stored?.store.runDir, onEvent: emit,
    });
    store = stored?.store ?? RunStore.create({ spec, options: { ...settings }, hosts: hostSummaries, workspace: req.workspace, out: req.out });
    if (stored) store.update({ options: { ...settings }, hosts: hostSummaries });
    listeners.unshift(store.listener); // persisted before any front end sees it
    // Hosts with machinery of their own (Slurm jobs started, ended, requeued) report it as the run's log.
    for (const h of hosts) h.onLog?.(log);
    run = new EvolutionRun({
      runId: store.runId,
      runDir: store.runDir,
      spec,
      baselineSource,
      operators,
      evaluator: pool,
      hardware: specHardware,
      policy: createPolicy(settings.policy),
      limits: plan.limits,
      draftBudget: settings.draftBudget,
      pipelineDepth: plan.pipelineDepth,
      resume: stored ? { candidates: stored.candidates, used: stored.record.counters.used, duplicates: stored.record.counters.duplicates, invalid: stored.record.counters.invalid } : undefined,
      signal: req.signal,
      quit: req.quit,
      jobTimeoutS: settings.jobTimeoutS,
      profile: settings.profile,
      inputs: settings.inputs,
      ...(config.tunePastTrend === false ? { pastTrend: false } : {}),
    });
  } catch (e) {
    await pool.dispose();
    throw e;
  }
  run.on(emit);
  const finished = run.run().finally(() => pool.dispose());
  return { spec, store, run, plan, finished };
}
