// The candidate table: virtualized (only the rows in view exist in the DOM), so a run of thousands of
// candidates scrolls and updates as fast as one of ten. Updates re-render the visible window only.
import type { CandidateRow } from '../protocol';
import { h } from './dom';
import { formatCandidateSpeedup, sortRows, visibleWindow, type SortKey } from '../runModel';

export const ROW_HEIGHT = 22;

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'id', label: 'Candidate' },
  { key: 'status', label: 'Status' },
  { key: 'speedup', label: 'Speedup' },
  { key: 'host', label: 'Host' },
  { key: 'operator', label: 'Operator' },
];

export class CandidateTable {
  readonly element: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private rows: CandidateRow[] = [];
  private order: CandidateRow[] = [];
  private sortKey: SortKey = 'speedup';
  private descending = true;
  private selected: string | undefined;
  private scheduled = false;
  /** How many row elements the last render created or reused (for tests and for the curious). */
  renderedRows = 0;

  constructor(private readonly onSelect: (id: string) => void, private readonly schedule: (fn: () => void) => void = (fn) => requestAnimationFrame(fn)) {
    const head = h('div', { class: 'row head', role: 'row' }, ...COLUMNS.map((c) => h('div', {
      class: `cell col-${c.key}`, role: 'columnheader', 'data-sort': c.key, onclick: () => this.sortBy(c.key),
    }, c.label)));
    this.spacer = h('div', { class: 'spacer' });
    this.viewport = h('div', { class: 'viewport', 'data-testid': 'candidate-table-viewport', onscroll: () => this.render() }, this.spacer);
    this.element = h('div', { class: 'candidate-table', role: 'table', 'data-testid': 'candidate-table' }, head, this.viewport);
  }

  setRows(rows: readonly CandidateRow[]): void {
    this.rows = [...rows];
    this.resort();
    this.render();
  }

  /** Rows added or changed; the window is redrawn once per frame however many arrive. */
  upsert(changed: readonly CandidateRow[]): void {
    const at = new Map(this.rows.map((r, i) => [r.id, i]));
    for (const r of changed) {
      const i = at.get(r.id);
      if (i === undefined) { at.set(r.id, this.rows.length); this.rows.push(r); } else this.rows[i] = { ...this.rows[i], ...r };
    }
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      this.resort();
      this.render();
    });
  }

  select(id: string | undefined): void {
    this.selected = id;
    this.render();
  }

  get count(): number {
    return this.rows.length;
  }

  sortBy(key: SortKey): void {
    if (this.sortKey === key) this.descending = !this.descending;
    else { this.sortKey = key; this.descending = key === 'speedup'; }
    this.resort();
    this.render();
  }

  /** Scrolls so that the row is in view. */
  reveal(id: string): void {
    const i = this.order.findIndex((r) => r.id === id);
    if (i >= 0) this.viewport.scrollTop = Math.max(0, i * ROW_HEIGHT - this.viewportHeight() / 2);
    this.render();
  }

  private resort(): void {
    this.order = sortRows(this.rows, this.sortKey, this.descending);
  }

  private viewportHeight(): number {
    return this.viewport.clientHeight || 320;
  }

  render(): void {
    this.spacer.style.height = `${this.order.length * ROW_HEIGHT}px`;
    const { first, last } = visibleWindow(this.order.length, this.viewport.scrollTop, this.viewportHeight(), ROW_HEIGHT);
    const existing = Array.from(this.spacer.children) as HTMLElement[];
    const count = last - first;
    for (let k = 0; k < count; k++) {
      const row = this.order[first + k];
      const el = existing[k] ?? this.spacer.appendChild(this.rowElement());
      this.fill(el, row, first + k);
    }
    for (let k = existing.length - 1; k >= count; k--) existing[k].remove();
    this.renderedRows = count;
  }

  private rowElement(): HTMLElement {
    const el = h('div', { class: 'row', role: 'row', 'data-testid': 'candidate-row', tabindex: 0 },
      ...COLUMNS.map((c) => h('div', { class: `cell col-${c.key}`, role: 'cell' })));
    el.addEventListener('click', () => { if (el.dataset.id) this.onSelect(el.dataset.id); });
    el.addEventListener('keydown', (e) => { if ((e as KeyboardEvent).key === 'Enter' && el.dataset.id) this.onSelect(el.dataset.id); });
    return el;
  }

  private fill(el: HTMLElement, r: CandidateRow, index: number): void {
    const status = r.status ?? r.state;
    el.style.top = `${index * ROW_HEIGHT}px`;
    el.dataset.id = r.id;
    el.dataset.status = status;
    el.classList.toggle('selected', r.id === this.selected);
    const cells = el.children;
    const speedup = formatCandidateSpeedup(r, this.rows.some((x) => x.confirmation === 'confirmed'));
    const values = [r.id, status, speedup, r.host ?? '', r.mode && r.mode !== r.operator ? `${r.operator}/${r.mode}` : r.operator];
    values.forEach((v, i) => { if (cells[i].textContent !== v) cells[i].textContent = v; });
    (cells[1] as HTMLElement).className = `cell col-status status-${status}`;
    (cells[2] as HTMLElement).className = `cell col-speedup${r.confirmation ? ' ' + r.confirmation : ''}`;
    (cells[2] as HTMLElement).title = speedup; // whole on hover, should a narrow side bar cut it
    if (r.reason) el.title = r.reason; else el.removeAttribute('title');
  }
}
