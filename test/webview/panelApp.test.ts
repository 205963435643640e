// The side panel's logic in a DOM (happy-dom): the ready handshake, snapshot and incremental deltas, the
// virtualized table with a thousand candidates, selection and details, and the commands it sends back.
import { beforeEach, describe, expect, it } from 'vitest';
import { AcceptCandidate, GetCandidateDetails, PreviewCandidate, SelectRun, StopRun, type CandidateDetails, type CandidateRow, type Envelope, type RunView } from '../../src/protocol';
import { PanelApp } from '../../src/webview/panelApp';
import { PanelClient } from '../../src/webview/panelClient';

class FakeHost {
  sent: Envelope[] = [];
  details = new Map<string, CandidateDetails>();
  postMessage(m: Envelope): void {
    this.sent.push(m);
    if (m.kind === 'request' && m.method === GetCandidateDetails.method) {
      const { id } = m.params as { id: string };
      const result = this.details.get(id) ?? { error: `no ${id}` };
      queueMicrotask(() => channel.dispatchEvent(new MessageEvent('message', { data: structuredClone({ kind: 'response', id: m.id, result }) })));
    }
  }
}

// Each test gets its own message channel; messages are cloned, as postMessage does.
let channel: EventTarget;

function notify(method: string, params: unknown): void {
  channel.dispatchEvent(new MessageEvent('message', { data: structuredClone({ kind: 'notification', method, params }) }));
}

function row(i: number, extra: Partial<CandidateRow> = {}): CandidateRow {
  return { id: `c${String(i).padStart(4, '0')}`, parents: i ? ['c0000'] : [], operator: i ? 'tune' : 'baseline', state: 'done', status: 'ok', speedup: 1 + i / 1000, host: 'local', proposedAt: i, ...extra };
}

function run(n: number): RunView {
  return {
    runId: 'r1', runDir: '/w/.kernelevolve/runs/r1', kernel: 'matmul', specPath: '/w/spec.py', sourcePath: '/w/matmul.cpp',
    status: 'running', startedAt: 0, evaluated: n, budget: 2000, invalidProposals: 0, best: { id: 'c0500', speedup: 1.5 },
    candidates: Array.from({ length: n }, (_, i) => row(i)), bestOverTime: [{ t: 1000, speedup: 1.5, id: 'c0500' }], log: [],
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));
let host: FakeHost;
let root: HTMLElement;
let app: PanelApp;
let frames: (() => void)[];

beforeEach(() => {
  document.body.innerHTML = '<div id="root"></div>';
  root = document.getElementById('root')!;
  host = new FakeHost();
  frames = [];
  channel = new EventTarget();
  const client = new PanelClient(host, channel);
  app = new PanelApp(root, client, (fn) => frames.push(fn));
  client.ready('test');
});

const runFrames = () => { for (const f of frames.splice(0)) f(); };
const tableRows = () => Array.from(root.querySelectorAll<HTMLElement>('[data-testid="candidate-row"]'));

describe('PanelApp', () => {
  it('says ready first and shows an empty state until a run arrives', () => {
    expect(host.sent[0]).toEqual({ kind: 'command', method: 'ready', params: { clientId: 'test' } });
    notify('state/snapshot', { runs: [] });
    expect(root.querySelector<HTMLElement>('[data-testid="empty-state"]')!.hidden).toBe(false);
  });

  it('renders only the visible window of a thousand candidates, best first', () => {
    notify('state/snapshot', { runs: [run(1000)], selectedRunId: 'r1', run: run(1000) });
    const rows = tableRows();
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(60);
    expect(rows[0].dataset.id).toBe('c0999');
    expect(root.querySelector<HTMLElement>('.spacer')!.style.height).toBe(`${1000 * 22}px`);
    expect(root.querySelector('[data-testid="best-speedup"]')!.textContent).toBe('1.50x');
  });

  it('applies deltas incrementally: new and changed rows, progress and the chart', () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    const before = tableRows()[0];
    notify('run/updated', { runId: 'r1', rows: [row(3, { state: 'evaluating', status: undefined, speedup: undefined })], header: { evaluated: 4, used: 3 } });
    expect(tableRows().length).toBe(3); // drawn on the next frame, once however many deltas came
    runFrames();
    expect(tableRows().length).toBe(4);
    expect(tableRows().find((r) => r.dataset.id === 'c0003')!.dataset.status).toBe('evaluating');
    notify('run/updated', { runId: 'r1', rows: [row(3, { speedup: 3.2 })], header: { best: { id: 'c0003', speedup: 3.2 } }, points: [{ t: 2000, speedup: 3.2, id: 'c0003' }] });
    runFrames();
    expect(tableRows()[0].dataset.id).toBe('c0003');
    expect(tableRows()[0].children[2].textContent).toBe('3.20x');
    expect(tableRows()).toContain(before); // row elements are reused, not rebuilt
    expect(root.querySelector('[data-testid="progress"]')!.textContent).toMatch(/^4 judged · 3\/2000 proposals · best 3\.20x/);
    expect(root.querySelectorAll('[data-testid="speedup-chart"] circle').length).toBe(2);
  });

  it('ignores deltas of another run than the one shown', () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    notify('run/updated', { runId: 'other', rows: [row(9)] });
    runFrames();
    expect(tableRows().map((r) => r.dataset.id)).not.toContain('c0009');
  });

  it('asks the host for a selected candidate\'s details and sends Preview / Accept for it', async () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    host.details.set('c0002', {
      runId: 'r1', id: 'c0002', operator: 'tune', parents: ['c0000'], status: 'ok', speedup: 2.5, reason: 'Correct on 3 shapes.', host: 'local',
      compile: { flags: '-O3' }, profile: { registers: 40, spills: 0, occupancyPct: 75, other: {} }, rationale: 'BLOCK_M 64 -> 128',
      diff: [{ kind: 'del', oldNo: 5, tokens: [{ text: 'constexpr int BLOCK_M = 64;' }] }, { kind: 'add', newNo: 5, tokens: [{ text: 'constexpr', light: '#0000FF', dark: '#569CD6' }, { text: ' int BLOCK_M = 128;' }] }],
      acceptable: true,
    });
    tableRows().find((r) => r.dataset.id === 'c0002')!.click();
    await flush();
    await flush();
    const details = root.querySelector<HTMLElement>('[data-testid="candidate-details"]')!;
    expect(details.dataset.id).toBe('c0002');
    expect(root.querySelector('[data-testid="verdict"]')!.textContent).toContain('Correct on 3 shapes.');
    expect(root.querySelector('[data-testid="profile"]')!.textContent).toMatch(/registers \/ thread40.*occupancy75\.0 %/);
    expect(root.querySelector('[data-testid="rationale"]')!.textContent).toContain('BLOCK_M 64 -> 128');
    const added = root.querySelector<HTMLElement>('.diff-line.add span:nth-child(4)')!;
    expect(added.textContent).toBe('constexpr');
    expect(added.style.getPropertyValue('--td')).toBe('#569CD6');
    (root.querySelector('[data-testid="preview-candidate"]') as HTMLElement).click();
    (root.querySelector('[data-testid="accept-candidate"]') as HTMLElement).click();
    expect(host.sent.filter((m) => m.kind === 'command').slice(-2)).toEqual([
      { kind: 'command', method: PreviewCandidate.method, params: { runId: 'r1', id: 'c0002' } },
      { kind: 'command', method: AcceptCandidate.method, params: { runId: 'r1', id: 'c0002' } },
    ]);
    expect(tableRows().find((r) => r.dataset.id === 'c0002')!.classList.contains('selected')).toBe(true);
  });

  it('never turns candidate text into markup', async () => {
    notify('state/snapshot', { runs: [run(2)], selectedRunId: 'r1', run: run(2) });
    host.details.set('c0001', { runId: 'r1', id: 'c0001', operator: 'llm', parents: [], compile: {}, profile: { other: {} }, rationale: '<img src=x onerror=alert(1)>', diff: [], acceptable: false });
    app.selectCandidate('c0001');
    await flush();
    await flush();
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('[data-testid="rationale"]')!.textContent).toContain('<img src=x');
    expect(root.querySelector('[data-testid="accept-candidate"]')).toBeNull();
  });

  it('draws the lineage with the selected candidate\'s ancestry', () => {
    const v = run(4);
    v.candidates[3] = row(3, { parents: ['c0002'] });
    notify('state/snapshot', { runs: [v], selectedRunId: 'r1', run: v });
    const tree = root.querySelector('[data-testid="lineage-tree"]')!;
    const node3 = tree.querySelector<HTMLElement>('[data-id="c0003"]')!;
    expect(node3.closest('ul')!.parentElement!.querySelector(':scope > span')!.getAttribute('data-id')).toBe('c0002');
  });
  it('marks confirmed leaders and those that lost their place, and shows the confirmed best', () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    notify('run/updated', { runId: 'r1', header: { confirming: true }, rows: [row(2, { speedup: 3.19, confirmation: 'confirmed' }), row(1, { speedup: 0, confirmation: 'lost' })] });
    runFrames();
    const cell = (id: string) => tableRows().find((r) => r.dataset.id === id)!.children[2];
    expect(cell('c0002').textContent).toBe('3.19x confirmed');
    expect(cell('c0002').classList.contains('confirmed')).toBe(true);
    expect(cell('c0001').textContent).toBe('lost its place');
    expect(tableRows().map((r) => r.dataset.id)).toEqual(['c0002', 'c0000', 'c0001']);
    notify('run/updated', { runId: 'r1', header: { status: 'finished', reason: 'budget', confirming: undefined, best: { id: 'c0002', speedup: 3.19, confirmed: true } }, points: [{ t: 3000, speedup: 3.19, id: 'c0002' }] });
    expect(root.querySelector('[data-testid="best-speedup"]')!.textContent).toBe('3.19x');
    expect(root.querySelector('[data-testid="best-confirmed"]')!.textContent).toBe(' confirmed');
    expect(root.querySelector('[data-testid="confirming"]')).toBeNull();
  });

  it('says it is confirming the leaders after the first Stop; Stop again is "Stop now"', () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    const stop = () => root.querySelector<HTMLElement>('[data-testid="stop-run"]')!;
    expect(stop().textContent).toBe('Stop');
    expect(root.querySelector('[data-testid="confirming"]')).toBeNull();
    stop().click();
    notify('run/updated', { runId: 'r1', header: { confirming: true } });
    expect(root.querySelector('[data-testid="confirming"]')!.textContent).toBe('confirming the leaders…');
    expect(stop().textContent).toBe('Stop now');
    stop().click();
    expect(host.sent.filter((m) => m.kind === 'command' && m.method === StopRun.method)).toHaveLength(2);
    notify('run/updated', { runId: 'r1', header: { status: 'stopped', reason: 'stopped', confirming: undefined } });
    expect(root.querySelector('[data-testid="confirming"]')).toBeNull();
    expect(root.querySelector('[data-testid="resume-run"]')).not.toBeNull();
  });

  it('shows a failed run\'s whole reason, offers no Resume, and leaves no engine news from before the end', () => {
    const reason = 'Importing bias_gelu_kernel_spec.py failed: ModuleNotFoundError: No module named \'torch\'. This kernel needs a GPU host.';
    // the baseline's row as RunState closes it when its evaluation failed: "failed", the reason on hover
    const failed: RunView = { ...run(1), status: 'failed', reason, failedCandidate: 'c0000',
      candidates: [row(0, { state: 'failed', status: undefined, speedup: undefined, reason })], log: [{ level: 'info', message: 'Judging c0019 (2.88x) once more to confirm its speedup.', at: 1 }] };
    notify('state/snapshot', { runs: [failed], selectedRunId: 'r1', run: failed });
    const failure = root.querySelector<HTMLElement>('[data-testid="run-failure"]')!;
    expect(failure.textContent).toBe(reason);
    expect(failure.title).toBe(reason);
    expect(root.querySelector('[data-testid="resume-run"]')).toBeNull();
    expect(root.querySelector('.last-log')).toBeNull();
    runFrames();
    const status = tableRows()[0].querySelector<HTMLElement>('.col-status')!;
    expect([status.textContent, status.className, tableRows()[0].title]).toEqual(['failed', 'cell col-status status-failed', reason]);
  });

  it('orders confirmed candidates first and marks a figure measured once as unconfirmed', () => {
    const r: RunView = { ...run(4), status: 'finished', reason: 'budget', best: { id: 'c0001', speedup: 2.61, confirmed: true },
      candidates: [row(0), row(1, { speedup: 2.61, confirmation: 'confirmed' }), row(2, { speedup: 2.88 }), row(3, { speedup: 2.7 })] };
    notify('state/snapshot', { runs: [r], selectedRunId: 'r1', run: r });
    runFrames();
    const shown = tableRows().map((e) => [e.dataset.id, e.querySelector('.col-speedup')!.textContent]);
    expect(shown.slice(0, 3)).toEqual([['c0001', '2.61x confirmed'], ['c0002', '2.88x unconfirmed'], ['c0003', '2.70x unconfirmed']]);
  });

  it('lists a leader\'s confirmation measurements in its details', async () => {
    notify('state/snapshot', { runs: [run(3)], selectedRunId: 'r1', run: run(3) });
    const base = { runId: 'r1', operator: 'tune', parents: ['c0000'], status: 'ok', compile: {}, profile: { other: {} }, diff: [], acceptable: true };
    host.details.set('c0002', { ...base, id: 'c0002', speedup: 3.19,
      confirmation: { state: 'confirmed', score: 3.19, measurements: [{ status: 'ok', speedup: 3.18 }, { status: 'ok', speedup: 3.21 }] } });
    host.details.set('c0001', { ...base, id: 'c0001', speedup: 2.4, acceptable: false,
      confirmation: { state: 'lost', score: 0, measurements: [{ status: 'ok', speedup: 2.4 }, { status: 'wrong_result', reason: 'max error 0.5 at shape n=64' }] } });
    app.selectCandidate('c0002');
    await flush();
    await flush();
    expect(root.querySelector('[data-testid="confirmation"]')!.textContent).toBe('confirmed 3.19x: 3.18x, 3.21x');
    expect(root.querySelector('[data-testid="detail-speedup"]')!.textContent).toBe('3.19x');
    app.selectCandidate('c0001');
    await flush();
    await flush();
    expect(root.querySelector('[data-testid="confirmation"]')!.textContent).toBe('lost its place: judged again it was wrong_result (max error 0.5 at shape n=64); measurements 2.40x, wrong_result');
    expect(root.querySelector('[data-testid="accept-candidate"]')).toBeNull();
  });

  it('lists the kernel\'s winners by hardware with figure and interval, and shows one when clicked', async () => {
    const other = { ...run(3), runId: 'r0', startedAt: -10 };
    const winners = [
      { hardware: 'nvidia-a100', runId: 'r0', candidateId: 'c0007', speedup: 1.84, interval: [1.8, 1.88], confirmed: true, operator: 'tune', mode: 'tune' },
      { hardware: 'nvidia-h200', runId: 'r1', candidateId: 'c0002', speedup: 2.31, interval: [2.2, 2.4], operator: 'tune' },
    ];
    notify('state/snapshot', { runs: [other, run(3)], selectedRunId: 'r1', run: run(3), winners });
    const rows = () => Array.from(root.querySelectorAll<HTMLElement>('[data-testid="hardware-winner"]'));
    expect(root.querySelector<HTMLElement>('.winners-section')!.hidden).toBe(false);
    expect(rows().map((r) => r.textContent)).toEqual([
      'nvidia-a100' + '1.84x (1.80-1.88) confirmed' + 'c0007 tune of r0',
      'nvidia-h200' + '2.31x (2.20-2.40)' + 'c0002 tune (this run)',
    ]);
    // a winner of the run on screen is selected; one of another run asks for that run, then is selected in it
    rows()[1].querySelector('a')!.click();
    expect(tableRows().find((r) => r.dataset.id === 'c0002')!.classList.contains('selected')).toBe(true);
    rows()[0].querySelector('a')!.click();
    expect(host.sent.at(-1)).toEqual({ kind: 'command', method: SelectRun.method, params: { runId: 'r0' } });
    notify('state/snapshot', { runs: [other, run(3)], selectedRunId: 'r0', run: { ...other, candidates: [row(0), row(7)] }, winners });
    expect(tableRows().find((r) => r.dataset.id === 'c0007')!.classList.contains('selected')).toBe(true);
    // a run ending updates the list; a kernel with no winner shows no section
    notify('winners/listed', { runId: 'r0', winners: winners.slice(1) });
    expect(rows().map((r) => r.dataset.hardware)).toEqual(['nvidia-h200']);
    notify('winners/listed', { runId: 'r0', winners: [] });
    expect(root.querySelector<HTMLElement>('.winners-section')!.hidden).toBe(true);
  });
});
