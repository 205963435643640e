// A pool of hosts with a job queue: each host runs up to `slots` evaluations at once. A job whose host fails
// (HostUnavailableError) goes back to the front of the queue and runs on another host, or on the same one
// once it recovers; it is never lost. Each job may have a timeout, and every job can be cancelled.
import type { EvaluationJob, Evaluator, PoolJobOptions, PoolVerdict } from '../contract/job';
import { AbortFanout } from './abortFanout';
import { HostUnavailableError, type Host } from './host';

export interface HostPoolOptions {
  /** How long a failed host rests before it gets jobs again, ms (doubles on each failure in a row). */
  retryDelayMs?: number;
  /** Longest rest, ms. */
  maxRetryDelayMs?: number;
  /** Give up on a job when every host has been failing for this long, ms. */
  giveUpAfterMs?: number;
  /** Told about each host failure (the engine logs it). */
  onHostFailure?: (host: string, error: Error) => void;
}

interface HostState {
  host: Host;
  busy: number;
  failures: number;
  downUntil: number;
  firstFailureAt?: number;
}

interface QueuedJob {
  job: EvaluationJob;
  opts: PoolJobOptions;
  resolve: (v: PoolVerdict) => void;
  reject: (e: unknown) => void;
  enqueuedAt: number;
  /** Stops watching its signal while it waits in the queue. */
  unwatch?: () => void;
}

export class HostPool implements Evaluator {
  private readonly states: HostState[];
  private readonly queue: QueuedJob[] = [];
  private wakeTimer?: NodeJS.Timeout;
  private readonly aborts = new AbortFanout();
  private readonly opts: Required<Omit<HostPoolOptions, 'onHostFailure'>> & Pick<HostPoolOptions, 'onHostFailure'>;

  constructor(hosts: Host[], opts: HostPoolOptions = {}) {
    if (!hosts.length) throw new Error('A host pool needs at least one host; add one to "hosts" in the config.');
    this.states = hosts.map((host) => ({ host, busy: 0, failures: 0, downUntil: 0 }));
    this.opts = { retryDelayMs: 2000, maxRetryDelayMs: 60_000, giveUpAfterMs: 10 * 60_000, ...opts };
  }

  get hosts(): readonly Host[] {
    return this.states.map((s) => s.host);
  }

  /** Evaluations that can run at once across the pool. */
  get totalSlots(): number {
    return this.states.reduce((n, s) => n + s.host.slots, 0);
  }

  /** The hardware of the first host that names one (the knowledge notes follow it). */
  get hardware(): string | undefined {
    return this.states.find((s) => s.host.hardware)?.host.hardware;
  }

  /** Queues a job; resolves with its verdict, rejects only when cancelled or when every host is gone for good. */
  evaluate(job: EvaluationJob, opts: PoolJobOptions = {}): Promise<PoolVerdict> {
    return new Promise((resolve, reject) => {
      if (opts.signal?.aborted) return reject(abortError(opts.signal));
      const entry: QueuedJob = { job, opts, resolve, reject, enqueuedAt: Date.now() };
      this.enqueue(entry, 'back');
      this.dispatch();
    });
  }

  /** Into the queue, watching its signal while there (a job cancelled while it waits leaves the queue). */
  private enqueue(entry: QueuedJob, where: 'front' | 'back'): void {
    entry.unwatch = this.aborts.on(entry.opts.signal, () => {
      const i = this.queue.indexOf(entry);
      if (i >= 0) {
        this.queue.splice(i, 1);
        entry.reject(abortError(entry.opts.signal!));
      }
    });
    if (where === 'front') this.queue.unshift(entry);
    else this.queue.push(entry);
  }

  private dequeue(): QueuedJob {
    const q = this.queue.shift()!;
    q.unwatch?.();
    return q;
  }

  private dispatch(): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    const now = Date.now();
    while (this.queue.length) {
      const free = this.states
        .filter((s) => s.busy < s.host.slots && s.downUntil <= now)
        .sort((a, b) => a.busy / a.host.slots - b.busy / b.host.slots)[0];
      if (!free) break;
      void this.run(free, this.dequeue()); // settles its job itself, whatever happens
    }
    if (this.queue.length) {
      const allDownSince = this.states.every((s) => s.firstFailureAt !== undefined)
        ? Math.max(...this.states.map((s) => s.firstFailureAt!)) : undefined;
      if (allDownSince !== undefined && now - allDownSince >= this.opts.giveUpAfterMs) {
        while (this.queue.length) {
          const q = this.dequeue();
          q.reject(new HostUnavailableError('pool', `Every host has been failing for ${Math.round((now - allDownSince) / 1000)} s; check the hosts with \`kernelevolve hosts --check\`, then resume the run.`));
        }
        return;
      }
      const nextUp = Math.min(...this.states.filter((s) => s.downUntil > now).map((s) => s.downUntil));
      if (Number.isFinite(nextUp)) this.wakeTimer = setTimeout(() => this.dispatch(), Math.max(10, nextUp - now));
    }
  }

  private async run(state: HostState, q: QueuedJob): Promise<void> {
    state.busy++;
    q.opts.onStart?.(state.host.name);
    const timeoutS = q.job.timeoutS;
    const controller = new AbortController();
    const unwatch = this.aborts.on(q.opts.signal, () => controller.abort(q.opts.signal?.reason));
    let timedOut = false;
    const timer = timeoutS && !state.host.enforcesTimeout ? setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, timeoutS * 1000 + 5000) : undefined; // only for a host that has no job runner applying the limit (every host here has)
    try {
      const verdict = await state.host.evaluate(q.job, controller.signal);
      state.failures = 0;
      state.firstFailureAt = undefined;
      q.resolve(verdict);
    } catch (e) {
      if (timedOut && !q.opts.signal?.aborted) {
        q.resolve({
          status: 'timeout',
          reason: `The evaluation did not finish within ${timeoutS} s on ${state.host.name}; it was stopped.`,
          host: state.host.name,
          placement: { host: state.host.name },
        });
      } else if (q.opts.signal?.aborted) {
        q.reject(abortError(q.opts.signal));
      } else if (e instanceof HostUnavailableError) {
        state.failures++;
        state.firstFailureAt ??= Date.now();
        state.downUntil = Date.now() + Math.min(this.opts.maxRetryDelayMs, this.opts.retryDelayMs * 2 ** (state.failures - 1));
        this.opts.onHostFailure?.(state.host.name, e);
        this.enqueue(q, 'front'); // back to the front: it was waiting longest
      } else {
        q.reject(e);
      }
    } finally {
      clearTimeout(timer);
      unwatch();
      state.busy--;
      this.dispatch();
    }
  }

  async dispose(): Promise<void> {
    clearTimeout(this.wakeTimer);
    await Promise.all(this.states.map((s) => s.host.dispose().catch(() => undefined)));
  }
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  const e = new Error('The evaluation was cancelled.');
  e.name = 'AbortError';
  return e;
}
