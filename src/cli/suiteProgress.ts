// The live progress of `kernelevolve suite` on stderr: on a terminal one rewritten bar (problems done/total, the
// current problem and how long it has run, elapsed, ETA) under the finished problems' lines; otherwise plain lines,
// one when a problem starts and one when it ends.
import { formatDuration } from './evolveProgress';

type Out = { write(s: string): boolean; isTTY?: boolean };

const BAR = 24;

export class SuiteProgress {
  private done: number;
  private readonly startedAt: number;
  /** Wall seconds of the problems finished in this session (the ETA's evidence; resumed rows took theirs before). */
  private readonly spent: number[] = [];
  /** The problems being judged, with when each started (several with `--jobs`). */
  private readonly current = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly out: Out, private readonly total: number, alreadyDone: number, private readonly now = () => Date.now()) {
    this.done = alreadyDone;
    this.startedAt = now();
    if (this.tty) {
      this.timer = setInterval(() => this.redraw(), 1000);
      this.timer.unref();
    }
  }

  private get tty(): boolean {
    return !!this.out.isTTY;
  }

  /** Seconds left: the mean of this session's problems times those left (unknown before the first ends). */
  etaS(): number | undefined {
    if (!this.spent.length) return undefined;
    const left = this.total - this.done;
    const mean = this.spent.reduce((a, s) => a + s, 0) / this.spent.length;
    const oldest = Math.min(...this.current.values());
    const running = this.current.size ? (this.now() - oldest) / 1000 : 0;
    return Math.max(0, left * mean / Math.max(1, this.current.size) - Math.min(running, mean));
  }

  bar(): string {
    const filled = this.total ? Math.round((BAR * this.done) / this.total) : BAR;
    const [name, at] = [...this.current.entries()][0] ?? [];
    const more = this.current.size > 1 ? ` and ${this.current.size - 1} more` : '';
    const current = name !== undefined ? `  ${name} (${formatDuration((this.now() - at!) / 1000)})${more}` : '';
    return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${this.done}/${this.total}${current}` +
      `  elapsed ${formatDuration((this.now() - this.startedAt) / 1000)}  ETA ${formatDuration(this.etaS())}`;
  }

  private redraw(): void {
    if (this.tty) this.out.write(`\r\x1b[2K${this.bar()}`);
  }

  started(name: string): void {
    this.current.set(name, this.now());
    if (this.tty) this.redraw();
    else this.out.write(`[${this.done + 1}/${this.total}] ${name} ...\n`);
  }

  /** A problem ended: `what` is its one-line result. */
  finished(name: string, what: string, wallS: number): void {
    this.done++;
    this.spent.push(wallS);
    this.current.delete(name);
    const line = `[${this.done}/${this.total}] ${name}: ${what} (${wallS.toFixed(1)} s)`;
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line}\n`);
      this.redraw();
    } else {
      this.out.write(`${line}; elapsed ${formatDuration((this.now() - this.startedAt) / 1000)}, ETA ${formatDuration(this.etaS())}\n`);
    }
  }

  /** A problem stopped without a row (it is judged again later): no longer among those being judged. */
  setAside(name: string, line: string): void {
    this.current.delete(name);
    this.note(line);
  }

  /** A line of its own above the bar (a message of the suite). */
  note(line: string): void {
    this.out.write(this.tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
    this.redraw();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) this.out.write('\r\x1b[2K');
  }
}
