// The side panel: the run picker and progress, the best-speedup chart, the lineage tree, the candidate
// table and the selected candidate's details. State comes from the host (snapshot after `ready`, then
// deltas); the panel keeps nothing the host cannot replay.
import {
  AcceptCandidate, CandidateFocused, GetCandidateDetails, OpenProfileReport, PreviewCandidate, ResumeRun,
  RunsListed, RunUpdated, SelectRun, StateSnapshot, StopRun, WinnersListed, type HardwareWinnerRow, type RunHeader, type RunView,
} from '../protocol';
import { CandidateTable } from './candidateTable';
import { renderDetails } from './candidateDetails';
import { clear, h } from './dom';
import { LineageTree } from './lineageTree';
import type { PanelClient } from './panelClient';
import { applyDelta, formatSpeedup, rowIndex } from '../runModel';
import { SpeedupChart } from './speedupChart';
import { WinnersByHardware } from './winnersByHardware';

export class PanelApp {
  private runs: RunHeader[] = [];
  private run: RunView | undefined;
  private index = new Map<string, number>();
  private selected: string | undefined;
  private winners: HardwareWinnerRow[] = [];
  /** A winner of another run was clicked: selected once that run's snapshot arrives. */
  private pendingSelection: { runId: string; id: string } | undefined;
  private readonly table: CandidateTable;
  private readonly chart = new SpeedupChart();
  private readonly tree: LineageTree;
  private readonly winnersView: WinnersByHardware;
  private readonly header = h('div', { class: 'run-header', 'data-testid': 'run-header' });
  private readonly runPicker = h('div', { class: 'run-picker' });
  private readonly details = h('div', { class: 'details', 'data-testid': 'details' });
  private readonly empty = h('div', { class: 'empty', 'data-testid': 'empty-state' },
    h('p', {}, 'No runs yet.'),
    h('p', {}, 'Put the cursor in a kernel (a @triton.jit function, a CUDA __global__ function or an extern "C" C++ function) and run "KernelEvolve: Evolve Kernel at Cursor".'));
  private treeScheduled = false;

  constructor(private readonly root: HTMLElement, private readonly client: PanelClient, private readonly schedule: (fn: () => void) => void = (fn) => requestAnimationFrame(fn)) {
    this.table = new CandidateTable((id) => this.selectCandidate(id), schedule);
    this.tree = new LineageTree((id) => this.selectCandidate(id));
    this.winnersView = new WinnersByHardware((runId, id) => {
      if (runId === this.run?.runId) { this.table.reveal(id); this.selectCandidate(id); return; }
      this.pendingSelection = { runId, id };
      this.client.send(SelectRun, { runId });
    });
    client.on(StateSnapshot, (p) => {
      this.runs = p.runs;
      this.run = p.run;
      this.winners = p.winners ?? [];
      this.index = p.run ? rowIndex(p.run) : new Map();
      if (this.pendingSelection && this.pendingSelection.runId === p.run?.runId && this.index.has(this.pendingSelection.id)) this.selected = this.pendingSelection.id;
      this.pendingSelection = undefined;
      if (this.selected && !this.index.has(this.selected)) this.selected = undefined;
      this.renderAll();
    });
    client.on(WinnersListed, (p) => {
      if (p.runId !== this.run?.runId) return;
      this.winners = p.winners;
      this.winnersView.render(this.winners, this.run?.runId);
    });
    client.on(RunsListed, (p) => { this.runs = p.runs; this.renderPicker(); });
    client.on(RunUpdated, (delta) => {
      const inList = this.runs.find((r) => r.runId === delta.runId);
      if (inList && delta.header) Object.assign(inList, delta.header);
      if (!this.run || delta.runId !== this.run.runId) { this.renderPicker(); return; }
      applyDelta(this.run, delta, this.index);
      if (delta.rows?.length) { this.table.upsert(delta.rows); this.scheduleTree(); }
      if (delta.header || delta.points?.length) { this.renderHeader(); this.renderChart(); }
      if (delta.rows?.some((r) => r.id === this.selected && r.state === 'done')) void this.loadDetails(this.selected!);
    });
    client.on(CandidateFocused, (p) => {
      if (this.run?.runId === p.runId) { this.table.reveal(p.id); this.selectCandidate(p.id); }
    });
    root.append(
      h('div', { class: 'panel' },
        this.runPicker, this.empty, this.header, this.winnersView.element,
        h('vscode-collapsible', { title: 'Best speedup over time', open: true, class: 'chart-section' }, this.chart.element),
        h('vscode-collapsible', { title: 'Candidates', open: true, class: 'table-section' }, this.table.element),
        h('vscode-collapsible', { title: 'Lineage', open: true, class: 'lineage-section' }, this.tree.element),
        this.details));
  }

  get tableView(): CandidateTable { return this.table; }

  selectCandidate(id: string): void {
    this.selected = id;
    this.table.select(id);
    this.scheduleTree();
    void this.loadDetails(id);
  }

  private async loadDetails(id: string): Promise<void> {
    if (!this.run) return;
    const runId = this.run.runId;
    const d = await this.client.request(GetCandidateDetails, { runId, id });
    if (this.selected !== id || this.run?.runId !== runId) return; // a later selection won
    renderDetails(this.details, d, {
      preview: (c) => this.client.send(PreviewCandidate, { runId, id: c }),
      accept: (c) => this.client.send(AcceptCandidate, { runId, id: c }),
      profileReport: (c) => this.client.send(OpenProfileReport, { runId, id: c }),
    });
  }

  private scheduleTree(): void {
    if (this.treeScheduled) return;
    this.treeScheduled = true;
    this.schedule(() => {
      this.treeScheduled = false;
      if (this.run) this.tree.render(this.run.candidates, this.selected);
    });
  }

  private renderAll(): void {
    const has = !!this.run;
    this.empty.hidden = has || this.runs.length > 0;
    this.renderPicker();
    this.renderHeader();
    this.renderChart();
    this.winnersView.render(this.run ? this.winners : [], this.run?.runId);
    this.table.setRows(this.run?.candidates ?? []);
    this.table.select(this.selected);
    if (this.run) this.tree.render(this.run.candidates, this.selected);
    if (this.selected) void this.loadDetails(this.selected);
    else renderDetails(this.details, undefined, { preview() {}, accept() {}, profileReport() {} });
  }

  private renderPicker(): void {
    clear(this.runPicker);
    if (!this.runs.length) return;
    const select = h('select', { 'data-testid': 'run-picker', 'aria-label': 'Run',
      onchange: (e: Event) => this.client.send(SelectRun, { runId: (e.target as HTMLSelectElement).value }) });
    for (const r of [...this.runs].sort((a, b) => b.startedAt - a.startedAt)) {
      const opt = h('option', { value: r.runId }, `${r.kernel} · ${r.runId} · ${r.status}${r.best ? ' · ' + formatSpeedup(r.best.speedup) : ''}`);
      if (r.runId === this.run?.runId) opt.selected = true;
      select.append(opt);
    }
    this.runPicker.append(select);
  }

  private renderHeader(): void {
    clear(this.header);
    const r = this.run;
    this.header.hidden = !r;
    if (!r) return;
    const used = r.used ?? Math.max(0, r.evaluated - 1);
    const pct = r.budget ? Math.min(100, (100 * used) / r.budget) : undefined;
    this.header.dataset.status = r.status;
    this.header.append(
      h('div', { class: 'title' }, h('strong', {}, r.kernel), ' ', h('vscode-badge', { 'data-testid': 'run-status' }, r.status),
        r.reason && r.status !== 'running' && r.status !== 'failed' ? h('span', { class: 'reason', title: r.reason }, ` (${r.reason})`) : ''),
      // A failure is shown whole (wrapped, and on hover): the cause and what to do are at its end as often as not.
      r.status === 'failed' && r.reason ? h('div', { class: 'run-failure', 'data-testid': 'run-failure', title: r.reason }, r.reason) : '',
      h('div', { class: 'progress-line', 'data-testid': 'progress' },
        `${r.evaluated} judged${r.budget ? ` · ${used}/${r.budget} proposals` : ''} · best `,
        h('span', { 'data-testid': 'best-speedup' }, r.best ? formatSpeedup(r.best.speedup) : '—'),
        r.best?.confirmed ? h('span', { class: 'confirmed', 'data-testid': 'best-confirmed' }, ' confirmed') : '',
        r.invalidProposals ? ` · ${r.invalidProposals} invalid proposals` : '',
        r.etaS !== undefined && r.status === 'running' ? ` · ETA ${Math.round(r.etaS)} s` : ''),
      r.confirming && r.status === 'running' ? h('div', { class: 'confirming', 'data-testid': 'confirming' }, 'confirming the leaders…') : '',
      pct !== undefined && r.status === 'running' ? h('vscode-progress-bar', { value: pct, max: 100 }) : '',
      h('div', { class: 'run-actions' },
        r.status === 'running'
          // After the first Stop the engine re-judges the leaders; Stop again ends the run without that.
          ? h('vscode-button', { secondary: true, 'data-testid': 'stop-run', title: r.confirming ? 'End the run now, without confirming the leaders' : 'Stop the search and confirm the leaders',
            onclick: () => this.client.send(StopRun, { runId: r.runId }) }, r.confirming ? 'Stop now' : 'Stop')
          // Only a run cut short can go on; a failed or finished one would end the same way again.
          : r.status === 'stopped' || r.status === 'interrupted'
            ? h('vscode-button', { secondary: true, 'data-testid': 'resume-run', onclick: () => this.client.send(ResumeRun, { runId: r.runId }) }, 'Resume')
            : '',
        r.best ? h('vscode-button', { 'data-testid': 'select-best', onclick: () => this.selectCandidate(r.best!.id) }, 'Show best') : ''),
      // The engine's news belongs to a live run; once it has ended, its status and reason say it all.
      r.log.length && r.status === 'running' ? h('div', { class: `last-log ${r.log[r.log.length - 1].level}`, title: r.log[r.log.length - 1].message }, r.log[r.log.length - 1].message) : '');
  }

  private renderChart(): void {
    if (!this.run) return;
    const end = this.run.status === 'running' ? Date.now() - this.run.startedAt : Math.max(0, ...this.run.bestOverTime.map((p) => p.t), ...this.run.candidates.map((c) => (c.finishedAt ?? c.proposedAt) - this.run!.startedAt));
    this.chart.render(this.run.bestOverTime, end);
  }
}
