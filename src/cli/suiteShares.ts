// The device's memory shared out among problems self-judged side by side (`kernelevolve suite --self-judge
// --jobs N`). Each problem starts with an equal share (95% of the device over N); one the harness refuses there
// says in its refusal how much it needs (memory_plan.py's arithmetic), and is given that share beside the others
// when it is at most SIDE_BY_SIDE, instead of waiting to be judged alone after all of them: on an H200 the
// element-wise problems of KernelBench's level 1 (6.4 GB in, 6.4 GB out) need about a quarter of the device each.

/** The most of the device the problems judged at once hold together. */
export const SIDE_BY_SIDE = 0.95;
/** The harness plans with 90% of what it is given, less 1 GiB for a CUDA context on a GPU (memory_plan.py). */
const HEADROOM = 0.9;
const GPU_RESERVE = 2 ** 30;
/** Room above the bare minimum: a problem given exactly that holds one buffer set and one round at a time. */
const MARGIN = 1.05;

/** Every problem's share when `jobs` are judged at once (undefined for one at a time: the whole device). */
export function equalShare(jobs: number): number | undefined {
  return jobs > 1 ? Math.floor((SIDE_BY_SIDE * 1000) / jobs) / 1000 : undefined;
}

function bytes(amount: string, unit: string): number {
  return Number(amount) * (unit === 'GB' ? 1e9 : 1e6);
}

/** The share of the device a problem needs, read from the harness's refusal within a share ("judging holds at
 *  least 32.21 GB at once ... this evaluation's share of 0.16 of the device's 143.77 GB"); undefined where the
 *  text is not such a refusal (an out-of-memory error at run time says nothing of what would have fitted). */
export function neededShare(refusal: string): number | undefined {
  const need = /judging holds at least ([\d.]+) (GB|MB) at once/.exec(refusal);
  const whole = /share of [\d.]+ of the device's ([\d.]+) (GB|MB)/.exec(refusal);
  if (!need || !whole) return undefined;
  const gpu = /does not fit in this GPU's memory/.test(refusal);
  const share = ((bytes(need[1], need[2]) + (gpu ? GPU_RESERVE : 0)) / HEADROOM / bytes(whole[1], whole[2])) * MARGIN;
  return Number.isFinite(share) && share > 0 ? Math.ceil(share * 100) / 100 : undefined;
}

/** Problems waiting for their turn, each with its share: the next starts while fewer than `jobs` run and its
 *  share fits beside theirs. Problems given a larger share go to the front, so they are not passed over
 *  forever by smaller ones. */
export class ShareQueue<T> {
  private readonly waiting: Array<{ item: T; share: number }> = [];
  private readonly held = new Map<T, number>();

  constructor(private readonly jobs: number) {}

  add(item: T, share: number, first = false): void {
    if (first) this.waiting.unshift({ item, share });
    else this.waiting.push({ item, share });
  }

  get size(): number {
    return this.waiting.length;
  }

  get running(): number {
    return this.held.size;
  }

  /** The next problem that may start now with its share, taken off the queue; undefined when none may. */
  next(): { item: T; share: number } | undefined {
    const head = this.waiting[0];
    if (!head || this.held.size >= this.jobs) return undefined;
    const used = [...this.held.values()].reduce((a, s) => a + s, 0);
    if (this.held.size && used + head.share > SIDE_BY_SIDE + 1e-9) return undefined;
    this.waiting.shift();
    this.held.set(head.item, head.share);
    return head;
  }

  done(item: T): void {
    this.held.delete(item);
  }
}
