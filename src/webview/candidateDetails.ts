// The selected candidate: its verdict, compile stats, profile (registers, spills, shared memory,
// occupancy, roofline position), the operator's rationale and its diff against the baseline, coloured
// by the host (shiki tokens with light and dark colours; the theme picks one through CSS variables).
import type { CandidateDetails, DiffLine } from '../protocol';
import { clear, h } from './dom';
import { formatSpeedup } from '../runModel';
import { intervalText } from '../contract/verdict';

export interface DetailActions {
  preview(id: string): void;
  accept(id: string): void;
  profileReport(id: string): void;
}

function kv(entries: [string, string | number | undefined][]): HTMLElement {
  const dl = h('dl', { class: 'kv' });
  for (const [k, v] of entries) if (v !== undefined && v !== '') dl.append(h('dt', {}, k), h('dd', {}, String(v)));
  return dl;
}

function section(title: string, testid: string, ...body: (Node | undefined | false)[]): HTMLElement {
  return h('section', { class: 'detail-section', 'data-testid': testid }, h('h3', {}, title), ...body);
}

export function diffView(lines: readonly DiffLine[]): HTMLElement {
  const pre = h('pre', { class: 'diff', 'data-testid': 'candidate-diff' });
  for (const line of lines) {
    const el = h('div', { class: `diff-line ${line.kind}` },
      h('span', { class: 'gutter' }, line.kind === 'skip' ? '' : String(line.oldNo ?? '')),
      h('span', { class: 'gutter' }, line.kind === 'skip' ? '' : String(line.newNo ?? '')),
      h('span', { class: 'sign' }, line.kind === 'add' ? '+' : line.kind === 'del' ? '-' : ' '));
    for (const t of line.tokens) {
      const span = h('span', {}, t.text);
      if (t.light) span.style.setProperty('--tl', t.light);
      if (t.dark) span.style.setProperty('--td', t.dark);
      el.append(span);
    }
    pre.append(el);
  }
  return pre;
}

/** "confirmed 3.19x: 3.18x, 3.21x" (the score the run keeps, then each measurement), or why it lost its place. */
export function confirmationText(c: NonNullable<CandidateDetails['confirmation']>): string {
  const each = c.measurements.map((m) => m.status === 'ok' ? formatSpeedup(m.speedup) : m.status).join(', ');
  if (c.state === 'confirmed') return `confirmed ${formatSpeedup(c.score)}: ${each}`;
  const failed = c.measurements.slice(1).find((m) => m.status !== 'ok');
  return `lost its place: judged again it was ${failed ? failed.status + (failed.reason ? ` (${failed.reason})` : '') : 'not faster'}; measurements ${each}`;
}

export function renderDetails(target: HTMLElement, d: CandidateDetails | { error: string } | undefined, actions: DetailActions): void {
  clear(target);
  if (!d) {
    target.append(h('p', { class: 'hint' }, 'Select a candidate to see its diff, verdict and profile.'));
    return;
  }
  if ('error' in d) {
    target.append(h('p', { class: 'error' }, d.error));
    return;
  }
  const p = d.profile;
  const roofline = p.intensity !== undefined
    ? `${p.intensity.toFixed(2)} FLOP/byte${p.achievedGflops !== undefined ? `, ${p.achievedGflops.toFixed(1)} GFLOP/s` : ''}${p.achievedGBps !== undefined ? `, ${p.achievedGBps.toFixed(1)} GB/s` : ''}`
    : undefined;
  const buttons = h('div', { class: 'actions' },
    d.acceptable && h('vscode-button', { 'data-testid': 'preview-candidate', onclick: () => actions.preview(d.id) }, 'Preview'),
    d.acceptable && h('vscode-button', { 'data-testid': 'accept-candidate', onclick: () => actions.accept(d.id) }, 'Accept'),
    h('vscode-button', { secondary: true, 'data-testid': 'profile-report', onclick: () => actions.profileReport(d.id) }, 'Profile report'));
  target.append(
    h('header', { class: 'detail-head', 'data-testid': 'candidate-details', 'data-id': d.id },
      h('strong', {}, d.id), ' ',
      h('vscode-badge', { class: `status-${d.status ?? 'pending'}` }, d.status ?? 'pending'), ' ',
      d.status === 'ok' ? h('span', { class: 'speedup', 'data-testid': 'detail-speedup' }, formatSpeedup(d.speedup)) : '',
      d.status === 'ok' && d.speedup !== undefined && intervalText(d.speedup, d.interval)
        ? h('span', { class: 'interval', 'data-testid': 'detail-interval', title: '95% interval of the paired ratio' }, intervalText(d.speedup, d.interval)) : '',
      h('div', { class: 'meta' }, `${d.operator}${d.mode && d.mode !== d.operator ? '/' + d.mode : ''}${d.host ? ' on ' + d.host : ''}${d.parents.length ? ' · from ' + d.parents.join(', ') : ''}`),
      buttons),
    section('Verdict', 'verdict', d.reason ? h('p', {}, d.reason) : undefined,
      d.confirmation ? h('p', { class: `confirmation ${d.confirmation.state}`, 'data-testid': 'confirmation' }, confirmationText(d.confirmation)) : undefined,
      d.shapes?.length ? h('table', { class: 'shapes' },
        h('tr', {}, h('th', {}, 'shape'), h('th', {}, 'baseline ms'), h('th', {}, 'candidate ms'), h('th', {}, 'speedup')),
        ...d.shapes.map((s) => h('tr', {}, h('td', {}, s.shape), h('td', {}, s.baselineMs.toFixed(4)), h('td', {}, s.candidateMs.toFixed(4)), h('td', {}, formatSpeedup(s.speedup, s.interval))))) : undefined),
    section('Compile', 'compile-stats', Object.keys(d.compile).length ? kv(Object.entries(d.compile)) : h('p', { class: 'hint' }, 'No compile statistics reported.')),
    section('Profile', 'profile', kv([
      ['registers / thread', p.registers], ['spills', p.spills],
      ['shared memory', p.sharedMemoryBytes !== undefined ? `${p.sharedMemoryBytes} B` : undefined],
      ['occupancy', p.occupancyPct !== undefined ? `${p.occupancyPct.toFixed(1)} %` : undefined],
      ['bottleneck', p.bottleneck], ['roofline', roofline],
      ...Object.entries(p.other),
    ])),
    !(d.rationale || d.knobs) ? '' : section('Rationale', 'rationale',
      d.rationale ? h('p', { class: 'rationale' }, d.rationale) : undefined,
      d.knobs ? kv(Object.entries(d.knobs).map(([k, v]) => [k, String(v)])) : undefined),
    section('Diff against the baseline', 'diff', d.diff.length ? diffView(d.diff) : h('p', { class: 'hint' }, 'Identical to the baseline.')),
    d.log ? section('Log', 'log', h('pre', { class: 'log' }, d.log)) : '',
  );
}
