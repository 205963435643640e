// The device's memory shared out among problems self-judged side by side (`kernelevolve suite --self-judge
// --jobs N`). Each problem starts with an equal share (95% of the device over N); one the harness refuses there
// says in its refusal how much it needs at least (memory_plan.py's arithmetic); it is given that, grown to what
// such an evaluation holds at its peak, beside the others when that is at most SIDE_BY_SIDE, instead of waiting to
// be judged alone after all of them: on an H200 a reduction of KernelBench's level 1 over an 8.6 GB input needs a
// third of the device.

/** The most of the device the problems judged at once hold together. */
export const SIDE_BY_SIDE = 0.95;
/** The harness plans with 90% of what it is given, less 1 GiB for a CUDA context on a GPU (memory_plan.py). */
const HEADROOM = 0.9;
const GPU_RESERVE = 2 ** 30;
/** What an evaluation holds at its peak over the harness's minimum (memory_plan.py: 3 copies of the inputs and 2
 *  of the outputs): the previous seed's buffers kept for the call on the same buffers, the reference's expected
 *  outputs asked ahead, the timed calls' outputs kept. On the H200, given the minimum's share, 4 of 6 of
 *  KernelBench's element-wise problems (as much out as in) ran out of memory beside others and the 16 problems
 *  started next failed within 1.6 s each (the device was full), while the reductions (inputs only) fit; 1.6 is
 *  eight sets over five. */
const PEAK_OVER_MINIMUM = 1.6;

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
  const share = ((bytes(need[1], need[2]) * PEAK_OVER_MINIMUM + (gpu ? GPU_RESERVE : 0)) / HEADROOM / bytes(whole[1], whole[2]));
  return Number.isFinite(share) && share > 0 ? Math.ceil(share * 100) / 100 : undefined;
}

/** The share to try again with after running out of memory at run time, which says nothing of what would fit
 *  (a neighbour may have held more than its share): the share it had, grown as a refusal's would be. */
export function grownShare(given: number): number {
  return Math.ceil(given * PEAK_OVER_MINIMUM * 100) / 100;
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
