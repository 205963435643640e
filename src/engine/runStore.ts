// The run store: everything a run learned, on disk, so it can be inspected by the editor and resumed after
// any interruption (even SIGKILL mid-evaluation). Layout of `.kernelevolve/runs/<runId>/` (docs/engine.md):
//   run.json                 the run: spec, options, status, best, counters, hosts
//   candidates/<id>.<ext>    each candidate's whole source
//   candidates/<id>.json     its metadata (Candidate without the source) and verdict
//   verdicts.jsonl           one line per judged candidate, appended; the authority on what was judged
//                            (and one per confirmation of a leader: {"id", "confirmation": verdict})
//   invalid.jsonl            proposals that could not become candidates (duplicates, garbage, operator errors)
// Writes are synchronous: an event is on disk before the engine goes on, and a verdict line is appended
// before anything else reflects it, so a killed run loses at most the evaluation that was running.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HostSummary } from '../contract/hardware';
import type { Candidate } from './candidate';
import type { EngineEvent, EngineEventListener, TerminationReason } from './events';
import type { InvalidProposal } from './operator';
import type { KernelSpec } from './spec';
import type { Verdict } from '../contract/verdict';

export const RUN_FORMAT = 1;

export interface RunCounters {
  /** Budget units used: every proposal (new, duplicate, cancelled as moot and not given back) and every invalid answer. */
  used: number;
  evaluated: number;
  duplicates: number;
  invalid: number;
}

/** The LLM calls of the run (every session of it): tokens, and the cost when every call's price was known. */
export interface RunUsage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd?: number;
}

/** Adds one call's usage to the totals; a call of unknown price leaves the total cost unknown. */
export function addUsage(total: RunUsage | undefined, call: { promptTokens: number; completionTokens: number; costUsd?: number }): RunUsage {
  const t = total ?? { calls: 0, promptTokens: 0, completionTokens: 0 };
  const priced = call.costUsd !== undefined && (t.calls === 0 || t.costUsd !== undefined);
  return {
    calls: t.calls + 1,
    promptTokens: t.promptTokens + call.promptTokens,
    completionTokens: t.completionTokens + call.completionTokens,
    ...(priced ? { costUsd: (t.costUsd ?? 0) + call.costUsd! } : {}),
  };
}

export interface RunRecord {
  format: number;
  runId: string;
  createdAt: string;
  updatedAt: string;
  status: 'running' | 'finished' | 'stopped' | 'error';
  reason?: TerminationReason;
  /** What ended the run in an error (events.ts RunError): its kind, the sentence, the candidate left unjudged. */
  error?: { kind: string; message: string; candidate?: string };
  spec: KernelSpec;
  /** The options the run was started with (the CLI's flags); a resume reuses them. */
  options: Record<string, unknown>;
  hosts: HostSummary[];
  best?: { id: string; speedup: number; operator: string; status: string };
  baseline?: { status: string; speedup?: number; reason: string };
  counters: RunCounters;
  /** LLM tokens and cost, when an LLM operator took part. */
  usage?: RunUsage;
}

export interface LoadedRun {
  store: RunStore;
  record: RunRecord;
  /** Candidates in id order, with every verdict from verdicts.jsonl applied; unjudged ones are 'queued'. */
  candidates: Candidate[];
  invalid: InvalidProposal[];
  /** The run's log (hosts' news such as Slurm job states, warnings), oldest first. */
  log: RunLogEntry[];
}

export interface RunLogEntry {
  level: 'info' | 'warn' | 'error';
  message: string;
  at: number;
}

export class RunStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunStoreError';
  }
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** One line of verdicts.jsonl: a candidate's verdict, or one more confirmation of it. */
interface VerdictLine {
  id: string;
  verdict?: Verdict;
  confirmation?: Verdict;
  placement?: Candidate['placement'];
  finishedAt?: number;
}

/** A candidate's metadata file without what only verdicts.jsonl may say: a verdict there alone is not trusted. */
function unverified(meta: Candidate & { sourceFile?: string }): Omit<Candidate, 'source'> {
  const { sourceFile: _file, verdict: _verdict, confirmations: _confirmations, source: _source, ...rest } = meta;
  return rest;
}

function applyVerdictLine(c: Omit<Candidate, 'source'>, line: VerdictLine): void {
  if (line.confirmation) {
    c.confirmations = [...(c.confirmations ?? []), line.confirmation];
    return;
  }
  if (!line.verdict) return;
  c.verdict = line.verdict;
  if (line.placement) c.placement = line.placement;
  if (line.finishedAt) c.timings.finishedAt = line.finishedAt;
}

/**
 * One candidate of a stored run as RunStore.load reads it (its metadata, its verdict and confirmations from
 * verdicts.jsonl alone), without its source and without reading the rest of the run: whatever shows a stored
 * candidate's figure computes it from the same candidate the editor holds. Undefined when it is not there.
 */
export function storedCandidate(runDir: string, id: string): Omit<Candidate, 'source'> | undefined {
  let meta: Candidate & { sourceFile?: string };
  try {
    meta = JSON.parse(fs.readFileSync(path.join(runDir, 'candidates', `${id}.json`), 'utf8')) as Candidate & { sourceFile?: string };
  } catch {
    return undefined;
  }
  const c = { ...unverified(meta), timings: { ...meta.timings } };
  let text = '';
  try {
    text = fs.readFileSync(path.join(runDir, 'verdicts.jsonl'), 'utf8');
  } catch {
    return c;
  }
  for (const line of text.split('\n')) {
    if (!line.includes(`"${id}"`)) continue;
    try {
      const l = JSON.parse(line) as VerdictLine;
      if (l.id === id) applyVerdictLine(c, l);
    } catch {
      // a line cut short by a kill
    }
  }
  return c;
}

function readJsonLines<T>(file: string): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // a line cut short by a kill: the evaluation it describes will simply be run again
    }
  }
  return out;
}

/** `20261130-091502-matmul`: sortable, readable, unique within the runs folder. */
export function newRunId(kernel: string, root: string, at = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getFullYear()}${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}${pad(at.getSeconds())}`;
  const base = `${stamp}-${kernel.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}`;
  let id = base;
  for (let n = 2; fs.existsSync(path.join(root, id)); n++) id = `${base}-${n}`;
  return id;
}

export class RunStore {
  private record: RunRecord;
  private readonly ext: string;
  private readonly known = new Map<string, Candidate>();

  private constructor(readonly runDir: string, record: RunRecord) {
    this.record = record;
    this.ext = path.extname(record.spec.sourcePath) || '.txt';
  }

  get runId(): string {
    return this.record.runId;
  }

  get candidatesDir(): string {
    return path.join(this.runDir, 'candidates');
  }

  /** Starts a new run in `out`, or in `<workspace>/.kernelevolve/runs/<runId>/`. */
  static create(args: { spec: KernelSpec; options: Record<string, unknown>; hosts: RunRecord['hosts']; workspace?: string; out?: string; now?: Date }): RunStore {
    let runDir: string;
    if (args.out) {
      runDir = path.resolve(args.out);
      if (fs.existsSync(path.join(runDir, 'run.json'))) {
        throw new RunStoreError(`${runDir} already holds a run; continue it with --resume ${runDir}, or pick another --out.`);
      }
    } else {
      const root = path.join(path.resolve(args.workspace ?? process.cwd()), '.kernelevolve', 'runs');
      fs.mkdirSync(root, { recursive: true });
      runDir = path.join(root, newRunId(args.spec.kernel, root, args.now));
    }
    fs.mkdirSync(path.join(runDir, 'candidates'), { recursive: true });
    const now = (args.now ?? new Date()).toISOString();
    const store = new RunStore(runDir, {
      format: RUN_FORMAT,
      runId: path.basename(runDir),
      createdAt: now,
      updatedAt: now,
      status: 'running',
      spec: args.spec,
      options: args.options,
      hosts: args.hosts,
      counters: { used: 0, evaluated: 0, duplicates: 0, invalid: 0 },
    });
    store.writeRecord();
    return store;
  }

  /** Opens a run for resuming or reading. Throws RunStoreError with a sentence when the folder is not a run. */
  static load(runDir: string): LoadedRun {
    const dir = path.resolve(runDir);
    let record: RunRecord;
    try {
      record = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')) as RunRecord;
    } catch {
      throw new RunStoreError(`${dir} is not a KernelEvolve run (no readable run.json); pass the folder printed as runDir when the run started.`);
    }
    if (record.format !== RUN_FORMAT) {
      throw new RunStoreError(`${dir} was written in run format ${record.format}; this KernelEvolve reads format ${RUN_FORMAT}.`);
    }
    const store = new RunStore(dir, record);
    const candidates: Candidate[] = [];
    let files: string[] = [];
    try {
      files = fs.readdirSync(store.candidatesDir).filter((f) => /^c\d+\.json$/.test(f)).sort();
    } catch {
      // no candidates yet
    }
    for (const f of files) {
      let meta: Candidate & { sourceFile?: string };
      try {
        meta = JSON.parse(fs.readFileSync(path.join(store.candidatesDir, f), 'utf8')) as Candidate & { sourceFile?: string };
      } catch {
        continue; // cut short by a kill before its source was complete: it was never evaluated
      }
      let source: string;
      try {
        source = fs.readFileSync(path.join(store.candidatesDir, meta.sourceFile ?? `${meta.id}${store.ext}`), 'utf8');
      } catch {
        continue;
      }
      candidates.push({ ...unverified(meta), source });
    }
    const byId = new Map(candidates.map((c) => [c.id, c]));
    for (const line of readJsonLines<VerdictLine>(path.join(dir, 'verdicts.jsonl'))) {
      const c = byId.get(line.id);
      if (c) applyVerdictLine(c, line);
    }
    for (const c of candidates) {
      // a cancelled candidate (moot speculation) stays cancelled: a resumed run does not judge it
      c.state = c.verdict ? 'done' : c.state === 'cancelled' ? 'cancelled' : 'queued';
      store.known.set(c.id, c);
    }
    const invalid = readJsonLines<InvalidProposal>(path.join(dir, 'invalid.jsonl'));
    const log = readJsonLines<RunLogEntry>(path.join(dir, 'log.jsonl'));
    return { store, record, candidates, invalid, log };
  }

  get current(): RunRecord {
    return this.record;
  }

  update(patch: Partial<RunRecord>): void {
    this.record = { ...this.record, ...patch };
    this.writeRecord();
  }

  private writeRecord(): void {
    this.record.updatedAt = new Date().toISOString();
    writeAtomic(path.join(this.runDir, 'run.json'), JSON.stringify(this.record, null, 2) + '\n');
  }

  sourcePath(id: string): string {
    return path.join(this.candidatesDir, `${id}${this.ext}`);
  }

  saveCandidate(c: Candidate): void {
    this.known.set(c.id, c);
    const src = this.sourcePath(c.id);
    if (!fs.existsSync(src)) writeAtomic(src, c.source);
    const { source: _omit, ...meta } = c;
    writeAtomic(path.join(this.candidatesDir, `${c.id}.json`), JSON.stringify({ ...meta, sourceFile: path.basename(src) }, null, 2) + '\n');
  }

  recordVerdict(c: Candidate): void {
    fs.appendFileSync(path.join(this.runDir, 'verdicts.jsonl'),
      JSON.stringify({ id: c.id, verdict: c.verdict, placement: c.placement, finishedAt: c.timings.finishedAt }) + '\n');
    this.saveCandidate(c);
  }

  /** A leader judged once more: the line goes next to its verdict, the candidate's file gets its confirmations. */
  recordConfirmation(c: Candidate, confirmation: Verdict): void {
    fs.appendFileSync(path.join(this.runDir, 'verdicts.jsonl'), JSON.stringify({ id: c.id, confirmation, finishedAt: Date.now() }) + '\n');
    this.saveCandidate(c);
  }

  /** A log line of the run (a host's news: scheduler jobs submitted, running, ended, requeued; warnings). */
  recordLog(entry: RunLogEntry): void {
    fs.appendFileSync(path.join(this.runDir, 'log.jsonl'), JSON.stringify(entry) + '\n');
  }

  recordInvalid(inv: InvalidProposal): void {
    fs.appendFileSync(path.join(this.runDir, 'invalid.jsonl'), JSON.stringify(inv) + '\n');
  }

  /** Persists what the engine reports; pass it to the engine's `on()`. */
  readonly listener: EngineEventListener = (e: EngineEvent) => {
    switch (e.type) {
      case 'candidate-proposed':
        this.saveCandidate(e.candidate);
        break;
      case 'candidate-started': {
        const c = this.known.get(e.id);
        if (c) this.saveCandidate(c);
        break;
      }
      case 'candidate-evaluated':
        this.recordVerdict(e.candidate);
        break;
      case 'candidate-cancelled':
        this.saveCandidate(e.candidate);
        break;
      case 'proposal-invalid':
        this.recordInvalid(e.invalid);
        break;
      case 'candidate-confirmed':
        this.recordConfirmation(e.candidate, e.confirmation);
        break;
      case 'best-improved':
        break;
      case 'log':
        this.recordLog({ level: e.level, message: e.message, at: e.at });
        break;
      case 'usage':
        this.update({ usage: addUsage(this.record.usage, e) });
        break;
      case 'progress':
        this.update({
          counters: {
            used: e.used ?? this.record.counters.used,
            evaluated: e.evaluated,
            duplicates: e.duplicates ?? this.record.counters.duplicates,
            invalid: e.invalid ?? this.record.counters.invalid,
          },
        });
        break;
      case 'run-started':
        this.update({ status: 'running', reason: undefined, error: undefined });
        break;
      case 'run-finished': {
        const status = e.reason === 'stopped' ? 'stopped' : e.reason === 'error' ? 'error' : 'finished';
        const b = e.summary.baseline;
        this.update({
          status,
          reason: e.reason,
          error: e.error,
          best: e.summary.best,
          baseline: b ? { status: b.status, speedup: b.speedup, reason: b.reason } : undefined,
        });
        break;
      }
      default:
        break;
    }
  };
}
