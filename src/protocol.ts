// The one message protocol between the extension host and the side panel's webview. Each message type is
// declared once here and imported by both sides, so neither can send a shape the other does not expect.
// Host -> webview: notifications. Webview -> host: commands (fire and forget) and requests (typed response).

export type RunStatus = 'running' | 'finished' | 'stopped' | 'interrupted' | 'failed';

/** One row of the candidate table: everything but the source, so a thousand rows stay small. */
export interface CandidateRow {
  id: string;
  parents: string[];
  operator: string;
  mode?: string;
  /** proposed | queued | evaluating | done */
  state: string;
  /** The verdict's status once judged (ok, compile_error, ...). */
  status?: string;
  speedup?: number;
  /** The speedup's 95% interval (paired ratios; see pairedScore.ts), when the harness gave one. */
  interval?: [number, number];
  host?: string;
  reason?: string;
  proposedAt: number;
  finishedAt?: number;
  /** A leader judged once more at the end: `confirmed` (speedup is then the confirmed score), or `lost` (not ok the second time). */
  confirmation?: 'confirmed' | 'lost';
}

export interface BestPoint {
  /** Milliseconds since the run started. */
  t: number;
  speedup: number;
  id: string;
}

export interface RunHeader {
  runId: string;
  runDir: string;
  kernel: string;
  specPath: string;
  sourcePath: string;
  status: RunStatus;
  startedAt: number;
  /** Why it ended (budget, plateau, stopped, ...; a failed run: what failed, in a sentence). */
  reason?: string;
  /** A failed run: the candidate it could not judge (its row then shows `failed` and the reason). */
  failedCandidate?: string;
  /** Candidates judged (the baseline included). */
  evaluated: number;
  /** Budget units used: proposals, duplicates and invalid answers (what `budget` limits). */
  used?: number;
  budget?: number;
  etaS?: number;
  /** `confirmed`: judged again at the end, `speedup` is the confirmed figure. */
  best?: { id: string; speedup: number; confirmed?: boolean };
  invalidProposals: number;
  /** The run was asked to stop and the engine is judging the leaders once more (a second Stop skips that). */
  confirming?: boolean;
}

/** Everything the panel shows of one run. */
export interface RunView extends RunHeader {
  candidates: CandidateRow[];
  bestOverTime: BestPoint[];
  log: { level: 'info' | 'warn' | 'error'; message: string; at: number }[];
}

/** An incremental change to a run, sent as the engine's events arrive. */
export interface RunDelta {
  runId: string;
  header?: Partial<RunHeader>;
  /** Rows added or changed (matched by id). */
  rows?: CandidateRow[];
  points?: BestPoint[];
  log?: RunView['log'];
}

/** The kernel's best correct variant on one kind of hardware, across the runs stored in the workspace. */
export interface HardwareWinnerRow {
  /** The `hardware` of the host that judged it (`nvidia-h200`, ...); without one, the machine as `hosts --check` names
   *  it (`AMD EPYC 7763 64-Core Processor (128 cores)`, `NVIDIA H200`); `unknown hardware` when nothing named it. */
  hardware: string;
  runId: string;
  candidateId: string;
  speedup: number;
  interval?: [number, number];
  confirmed?: boolean;
  operator: string;
  mode?: string;
}

export interface DiffToken {
  text: string;
  /** Colours for light and dark themes (absent: the editor's foreground). */
  light?: string;
  dark?: string;
}

export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'skip';
  oldNo?: number;
  newNo?: number;
  tokens: DiffToken[];
}

export interface ProfileFacts {
  registers?: number;
  spills?: number;
  sharedMemoryBytes?: number;
  occupancyPct?: number;
  bottleneck?: string;
  /** Arithmetic intensity (FLOP/byte) and achieved throughput, for the roofline position. */
  intensity?: number;
  achievedGflops?: number;
  achievedGBps?: number;
  /** Everything else the harness reported, flattened to strings. */
  other: Record<string, string>;
}

export interface CandidateDetails {
  runId: string;
  id: string;
  operator: string;
  mode?: string;
  parents: string[];
  status?: string;
  reason?: string;
  speedup?: number;
  interval?: [number, number];
  host?: string;
  rationale?: string;
  knobs?: Record<string, number | string>;
  shapes?: { shape: string; baselineMs: number; candidateMs: number; speedup: number; interval?: [number, number] }[];
  compile: Record<string, string>;
  profile: ProfileFacts;
  log?: string;
  diff: DiffLine[];
  /** The leader's confirmation: its first measurement and each re-judging (harness speedups), and the score it keeps. */
  confirmation?: { state: 'confirmed' | 'lost'; score: number; measurements: { status: string; speedup?: number; reason?: string }[] };
  /** True when this candidate can be previewed / accepted (a correct, faster variant). */
  acceptable: boolean;
}

// ---- message types -------------------------------------------------------------------------------------

export interface NotificationType<M extends string, P> { readonly kind: 'notification'; readonly method: M; readonly _params?: P }
export interface CommandType<M extends string, P> { readonly kind: 'command'; readonly method: M; readonly _params?: P }
export interface RequestType<M extends string, P, R> { readonly kind: 'request'; readonly method: M; readonly _params?: P; readonly _result?: R }

const notification = <M extends string, P>(method: M): NotificationType<M, P> => ({ kind: 'notification', method });
const command = <M extends string, P>(method: M): CommandType<M, P> => ({ kind: 'command', method });
const request = <M extends string, P, R>(method: M): RequestType<M, P, R> => ({ kind: 'request', method });

// host -> webview
/** The full state, sent after every `ready` (first load, reload, and show after hide). */
export const StateSnapshot = notification<'state/snapshot', { runs: RunHeader[]; selectedRunId?: string; run?: RunView; winners?: HardwareWinnerRow[] }>('state/snapshot');
/** Incremental update of one run. */
export const RunUpdated = notification<'run/updated', RunDelta>('run/updated');
/** The list of runs changed (a run started, a past run was found). */
export const RunsListed = notification<'runs/listed', { runs: RunHeader[] }>('runs/listed');
/** The shown run's kernel has new winners by hardware (a run of it ended). */
export const WinnersListed = notification<'winners/listed', { runId: string; winners: HardwareWinnerRow[] }>('winners/listed');
/** The host wants a candidate selected (e.g. from a CodeLens). */
export const CandidateFocused = notification<'candidate/focused', { runId: string; id: string }>('candidate/focused');

// webview -> host
export const Ready = command<'ready', { clientId: string }>('ready');
export const SelectRun = command<'run/select', { runId: string }>('run/select');
export const StopRun = command<'run/stop', { runId: string }>('run/stop');
export const ResumeRun = command<'run/resume', { runId: string }>('run/resume');
export const PreviewCandidate = command<'candidate/preview', { runId: string; id: string }>('candidate/preview');
export const AcceptCandidate = command<'candidate/accept', { runId: string; id: string }>('candidate/accept');
export const OpenProfileReport = command<'candidate/profileReport', { runId: string; id: string }>('candidate/profileReport');
export const GetCandidateDetails = request<'candidate/details', { runId: string; id: string }, CandidateDetails | { error: string }>('candidate/details');

export type ParamsOf<T> = T extends { _params?: infer P } ? P : never;
export type ResultOf<T> = T extends { _result?: infer R } ? R : never;

/** What travels through postMessage. */
export type Envelope =
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'command'; method: string; params: unknown }
  | { kind: 'request'; method: string; params: unknown; id: number }
  | { kind: 'response'; id: number; result: unknown };

export function envelope<T extends NotificationType<string, unknown> | CommandType<string, unknown>>(type: T, params: ParamsOf<T>): Envelope {
  return { kind: type.kind, method: type.method, params } as Envelope;
}

export function isMessage<T extends { method: string }>(e: Envelope, type: T): e is Envelope & { method: T['method'] } {
  return 'method' in e && e.method === type.method;
}
