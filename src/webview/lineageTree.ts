// The run's lineage: each candidate under the parent it was derived from, best speedups marked. Large
// runs show the ancestry of the selected candidate and the top of each level, not every leaf.
import type { CandidateRow } from '../protocol';
import { clear, h } from './dom';
import { ancestry, formatSpeedup, lineage, type LineageNode } from '../runModel';

const CHILDREN_SHOWN = 6;

export class LineageTree {
  readonly element: HTMLElement = h('div', { class: 'lineage', 'data-testid': 'lineage-tree', role: 'tree' });

  constructor(private readonly onSelect: (id: string) => void) {}

  render(rows: readonly CandidateRow[], selected?: string): void {
    clear(this.element);
    const path = new Set(selected ? ancestry(rows, selected) : []);
    const list = (nodes: LineageNode[], depth: number): HTMLElement => {
      const ranked = [...nodes].sort((a, b) => score(b.row) - score(a.row));
      const shown = ranked.filter((n, i) => i < CHILDREN_SHOWN || path.has(n.row.id));
      const ul = h('ul', { role: 'group' });
      for (const n of shown) {
        const r = n.row;
        const label = h('span', {
          class: `node status-${r.status ?? r.state}${r.id === selected ? ' selected' : ''}`, 'data-id': r.id, role: 'treeitem',
          onclick: () => this.onSelect(r.id),
        }, `${r.id} ${r.operator}${r.mode && r.mode !== r.operator ? '/' + r.mode : ''} ${r.status === 'ok' ? formatSpeedup(r.speedup) : r.status ?? r.state}`);
        ul.append(h('li', {}, label, n.children.length && depth < 40 ? list(n.children, depth + 1) : undefined));
      }
      if (ranked.length > shown.length) ul.append(h('li', { class: 'more' }, `… ${ranked.length - shown.length} more`));
      return ul;
    };
    this.element.append(list(lineage(rows), 0));
  }
}

function score(r: CandidateRow): number {
  return r.status === 'ok' ? r.speedup ?? 0 : -1;
}
