// The live progress of `kernelevolve evolve` on stderr: one rewritten line on a terminal, plain lines otherwise.
import type { EngineEvent } from '../engine/events';
import { scoreOf } from '../engine/pairedScore';
import { addUsage, type RunUsage } from '../engine/runStore';

export function formatDuration(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return '?';
  if (s < 60) return `${Math.round(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function tokens(n: number): string {
  return n < 1000 ? String(n) : n < 1e6 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1e6).toFixed(2)}M`;
}

/** `12.3k tokens $0.0042` for the status line. */
export function usageBrief(u: RunUsage): string {
  return `${tokens(u.promptTokens + u.completionTokens)} tokens${u.costUsd !== undefined ? ` $${u.costUsd.toFixed(4)}` : ''}`;
}

export class EvolveProgress {
  private evaluated = 0;
  private used = 0;
  private budget?: number;
  private best = 0;
  private bestId = '';
  private inFlight = 0;
  private etaS?: number;
  private invalid = 0;
  private lineShown = false;
  private pending?: string;
  /** LLM tokens and cost of this session. */
  usage?: RunUsage;

  constructor(private readonly out: NodeJS.WriteStream | { write(s: string): boolean; isTTY?: boolean }) {}

  private get tty(): boolean {
    return !!this.out.isTTY;
  }

  private status(): string {
    const budget = this.budget !== undefined ? `/${this.budget}` : '';
    const best = this.best > 0 ? `best ${this.best.toFixed(2)}x${this.bestId ? ` (${this.bestId})` : ''}` : 'best -';
    return `[${this.used}${budget}] ${this.evaluated} judged, ${best}, ${this.inFlight} in flight` +
      `${this.invalid ? `, ${this.invalid} wasted` : ''}${this.usage ? `, ${usageBrief(this.usage)}` : ''}, ETA ${formatDuration(this.etaS)}`;
  }

  private print(line: string): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line}\n`);
      this.out.write(this.status());
      this.lineShown = true;
    } else {
      this.out.write(`${line}\n`);
    }
  }

  private redraw(): void {
    if (!this.tty) return;
    this.out.write(`\r\x1b[2K${this.status()}`);
    this.lineShown = true;
  }

  /** Clears the rewritten line before the final report. */
  finish(): void {
    if (this.tty && this.lineShown) this.out.write('\r\x1b[2K');
    this.lineShown = false;
  }

  readonly listener = (e: EngineEvent): void => {
    switch (e.type) {
      case 'run-started':
        this.print(`${e.resumed ? 'resuming' : 'starting'} run ${e.runId} on ${e.kernel} (${e.runDir})`);
        break;
      case 'candidate-evaluated': {
        const c = e.candidate;
        const v = c.verdict!;
        const s = scoreOf(c);
        // the harness's own ratio is shown too when a baseline timing of this evaluation was far off
        const own = v.speedup !== undefined && Math.abs(Math.log(v.speedup / s)) > 0.1 ? ` (this evaluation: ${v.speedup.toFixed(2)}x)` : '';
        const what = v.status === 'ok' ? `ok ${s.toFixed(2)}x${own}` : v.status;
        const why = c.rationale ? `  ${c.rationale.split('\n')[0].slice(0, 80)}` : '';
        const line = c.operator === 'baseline' ? `${c.id} baseline ${what}: ${v.reason}` : `${c.id} ${c.operator}${c.mode && c.mode !== c.operator ? `/${c.mode}` : ''} ${what}${why}`;
        // off a terminal the line waits for the progress event that follows, so it can carry the totals
        if (this.tty) this.print(line);
        else this.pending = line;
        break;
      }
      case 'candidate-confirmed': {
        const c = e.candidate;
        const v = e.confirmation;
        const first = v.status === 'ok' ? `, confirmed ${scoreOf(c).toFixed(2)}x` : `: not ok the second time, out of the ranking`;
        this.print(`${c.id} judged again: ${v.status === 'ok' ? `${v.speedup?.toFixed(2)}x` : v.status}${first}`);
        break;
      }
      case 'best-improved':
        this.best = e.speedup;
        this.bestId = e.id;
        this.redraw();
        break;
      case 'progress':
        this.evaluated = e.evaluated;
        this.used = e.used ?? this.used;
        this.budget = e.budget;
        // the best can also go down: a leader judged again is scored by its later figures alone
        this.best = e.best;
        if (e.bestId) this.bestId = e.bestId === 'c0000' ? '' : e.bestId;
        this.inFlight = e.inFlight ?? 0;
        this.etaS = e.etaS;
        this.invalid = (e.invalid ?? 0) + (e.duplicates ?? 0);
        if (this.tty) this.redraw();
        else if (this.pending) this.out.write(`${this.pending}  | ${this.status()}\n`);
        this.pending = undefined;
        break;
      case 'proposal-invalid':
        this.print(`  ${e.invalid.operator}: not a new candidate: ${e.invalid.reason}`);
        break;
      case 'log':
        this.print(`${e.level}: ${e.message}`);
        break;
      case 'usage':
        this.usage = addUsage(this.usage, e);
        this.redraw();
        break;
      case 'run-finished':
        this.finish();
        break;
      default:
        break;
    }
  };
}
