// The kernel's winners by hardware: for each kind of host the kernel was evolved on, its best correct variant
// across the stored runs, with its figure and interval. A kernel tuned on an H200 and on an A100 keeps both,
// and accepting one can write a launcher that picks per device.
import type { HardwareWinnerRow } from '../protocol';
import { clear, h } from './dom';
import { formatSpeedup } from '../runModel';

export class WinnersByHardware {
  readonly body: HTMLElement = h('div', { class: 'winners', 'data-testid': 'winners-by-hardware' });
  readonly element: HTMLElement = h('vscode-collapsible', { title: 'Winners by hardware', open: true, class: 'winners-section' }, this.body);

  /** `select` shows a winner: a candidate of the run on screen, or another run of the kernel. */
  constructor(private readonly select: (runId: string, id: string) => void) {
    this.element.hidden = true;
  }

  render(winners: readonly HardwareWinnerRow[], shownRunId: string | undefined): void {
    clear(this.body);
    this.element.hidden = !winners.length;
    if (!winners.length) return;
    const table = h('table', { class: 'winners-table' },
      h('tr', {}, h('th', {}, 'hardware'), h('th', {}, 'speedup'), h('th', {}, 'variant')));
    for (const w of winners) {
      const here = w.runId === shownRunId;
      table.append(h('tr', { 'data-testid': 'hardware-winner', 'data-hardware': w.hardware, class: here ? 'this-run' : '' },
        h('td', {}, w.hardware),
        h('td', { class: 'speedup' }, formatSpeedup(w.speedup, w.interval), w.confirmed ? ' confirmed' : ''),
        h('td', {}, h('a', { href: '#', title: here ? 'Select this candidate' : `Show run ${w.runId}`,
          onclick: (e: Event) => { e.preventDefault(); this.select(w.runId, w.candidateId); } },
        `${w.candidateId} ${w.operator}${w.mode && w.mode !== w.operator ? '/' + w.mode : ''}`), here ? ' (this run)' : ` of ${w.runId}`)));
    }
    this.body.append(table);
  }
}
