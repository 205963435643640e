import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../../src/contract/verdict';
import type { HostCheck } from '../../../src/contract/hardware';
import type { EvaluationJob } from '../../../src/contract/job';
import { HostUnavailableError, type Host } from '../../../src/remote/host';
import { HostPool } from '../../../src/remote/hostPool';

/** A host whose behaviour the test scripts: how long a job takes, and when the host itself fails. */
class ScriptedHost implements Host {
  readonly ran: string[] = [];
  running = 0;
  maxRunning = 0;
  failNext = 0;
  constructor(readonly name: string, readonly slots: number, private readonly ms = 20, readonly hardware?: string) {}
  async evaluate(job: EvaluationJob, signal?: AbortSignal): Promise<Verdict> {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, this.ms);
        signal?.addEventListener('abort', () => {
          clearTimeout(t);
          reject(new Error('killed'));
        }, { once: true });
      });
      if (this.failNext > 0) {
        this.failNext--;
        throw new HostUnavailableError(this.name, `${this.name} dropped the connection`);
      }
      this.ran.push(job.id);
      return { status: 'ok', reason: 'fine', speedup: 1, host: this.name };
    } finally {
      this.running--;
    }
  }
  async check(): Promise<HostCheck> {
    return { host: this.name, reachable: true, facts: {} };
  }
  async dispose(): Promise<void> {}
}

const job = (id: string, timeoutS?: number): EvaluationJob => ({ id, specPath: '/s.py', baselinePath: '/k.cpp', candidateSource: '', candidateFileName: 'k.cpp', timeoutS });

describe('HostPool', () => {
  it('runs up to `slots` jobs per host and spreads the queue over the hosts', async () => {
    const a = new ScriptedHost('a', 2, 30, 'cpu-x86');
    const b = new ScriptedHost('b', 1, 30);
    const pool = new HostPool([a, b]);
    expect(pool.totalSlots).toBe(3);
    expect(pool.hardware).toBe('cpu-x86');
    const verdicts = await Promise.all(Array.from({ length: 9 }, (_, i) => pool.evaluate(job(`j${i}`))));
    expect(verdicts.every((v) => v.status === 'ok')).toBe(true);
    expect(a.maxRunning).toBe(2);
    expect(b.maxRunning).toBe(1);
    expect(a.ran.length + b.ran.length).toBe(9);
    expect(b.ran.length).toBeGreaterThan(0);
  });

  it('requeues a job whose host fails, on another host, and loses none', async () => {
    const a = new ScriptedHost('a', 1, 10);
    const b = new ScriptedHost('b', 1, 10);
    a.failNext = 3;
    const failures: string[] = [];
    const pool = new HostPool([a, b], { retryDelayMs: 50, onHostFailure: (h) => failures.push(h) });
    const verdicts = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.evaluate(job(`j${i}`))));
    expect(verdicts.map((v) => v.status)).toEqual(Array(6).fill('ok'));
    expect([...a.ran, ...b.ran].sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5']);
    expect(failures.length).toBeGreaterThanOrEqual(1);
  });

  it('retries on the same host once it recovers when it is the only one', async () => {
    const a = new ScriptedHost('a', 1, 5);
    a.failNext = 2;
    const pool = new HostPool([a], { retryDelayMs: 20 });
    const v = await pool.evaluate(job('only'));
    expect(v.status).toBe('ok');
    expect(a.ran).toEqual(['only']);
  });

  it('gives up with a sentence when every host keeps failing', async () => {
    const a = new ScriptedHost('a', 1, 5);
    a.failNext = 1000;
    const pool = new HostPool([a], { retryDelayMs: 10, maxRetryDelayMs: 20, giveUpAfterMs: 150 });
    await expect(pool.evaluate(job('doomed'))).rejects.toThrow(/Every host has been failing.*kernelevolve hosts --check/);
  });

  it('judges a job that outlives its timeout as a timeout', async () => {
    const a = new ScriptedHost('a', 1, 10_000);
    const pool = new HostPool([a]);
    const started = Date.now();
    const v = await pool.evaluate(job('slow', 0.05));
    expect(v.status).toBe('timeout');
    expect(v.reason).toMatch(/did not finish within 0.05 s/);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('cancels queued and running jobs on abort', async () => {
    const a = new ScriptedHost('a', 1, 5_000);
    const pool = new HostPool([a]);
    const stop = new AbortController();
    const running = pool.evaluate(job('running'), { signal: stop.signal });
    const queued = pool.evaluate(job('queued'), { signal: stop.signal });
    setTimeout(() => stop.abort(), 30);
    await expect(running).rejects.toThrow();
    await expect(queued).rejects.toThrow();
    expect(a.ran).toEqual([]);
    expect(a.running).toBe(0);
  });

  it('holds one listener on a signal that many jobs share, and none once they are done', async () => {
    // a host that does not watch the signal itself, so that the listeners counted are the pool's
    const quiet: Host = {
      name: 'q', slots: 4,
      evaluate: async (j) => {
        await new Promise((r) => setTimeout(r, 5));
        return { status: 'ok', reason: 'fine', speedup: 1, host: 'q', id: j.id } as Verdict;
      },
      check: async () => ({ host: 'q', reachable: true, facts: {} }),
      dispose: async () => undefined,
    };
    const pool = new HostPool([quiet]);
    const shared = new AbortController();
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, getEventListeners(shared.signal, 'abort').length)), 1);
    const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => pool.evaluate(job(`j${i}`), { signal: shared.signal })));
    clearInterval(watch);
    expect(verdicts.every((v) => v.status === 'ok')).toBe(true);
    expect(most).toBe(1); // 4 running and 26 queued, one listener
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    // and the shared signal still stops what runs and what waits
    const slow: Host = { ...quiet, evaluate: (_j, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('killed')))) };
    const stopping = new HostPool([slow]);
    const stop = new AbortController();
    const all = Array.from({ length: 6 }, (_, i) => stopping.evaluate(job(`s${i}`), { signal: stop.signal }));
    setTimeout(() => stop.abort(), 10);
    const settled = await Promise.allSettled(all);
    expect(settled.every((r) => r.status === 'rejected')).toBe(true);
  });
});
