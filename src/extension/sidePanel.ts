// The activity-bar side panel: a webview view that shows the runs. It holds no state of its own: after the
// webview says `ready` (first load, reload, or being shown again after VS Code dropped it while hidden) the
// host sends a full snapshot, then deltas. Scripts only from dist/ with a nonce; styles from media/.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import {
  AcceptCandidate, CandidateFocused, GetCandidateDetails, OpenProfileReport, PreviewCandidate, Ready, ResumeRun,
  RunsListed, RunUpdated, SelectRun, StateSnapshot, StopRun, WinnersListed,
  type Envelope, type NotificationType, type ParamsOf,
} from '../protocol';
import { DisposableStore } from './disposables';
import type { RunManager } from './runManager';

export interface PanelActions {
  preview(runId: string, id: string): Promise<void>;
  accept(runId: string, id: string): Promise<void>;
  profileReport(runId: string, id: string): Promise<void>;
  stop(runId: string): Promise<void>;
  resume(runId: string): Promise<void>;
}

export class SidePanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'kernelEvolve.runs';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private selectedRunId: string | undefined;
  private readonly store = new DisposableStore();
  private viewStore = new DisposableStore();
  /** How many `ready` messages came (a reload or a re-show each sends one); tests read it. */
  readyCount = 0;

  constructor(private readonly extensionUri: vscode.Uri, private readonly runs: RunManager, private readonly actions: PanelActions) {
    this.store.add(runs.onDidUpdate((delta) => {
      if (!this.selectedRunId) this.selectedRunId = delta.runId;
      this.post(RunUpdated, delta);
    }));
    this.store.add(runs.onDidChangeRuns((started) => {
      if (started) this.selectedRunId = started;
      if (started) this.sendSnapshot();
      else {
        this.post(RunsListed, { runs: this.runs.headers() });
        // a run that ended may have set a new winner for its hardware
        if (this.selectedRunId && this.view && this.ready) this.post(WinnersListed, { runId: this.selectedRunId, winners: this.runs.winnersFor(this.selectedRunId) });
      }
    }));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.viewStore.dispose();
    this.viewStore = new DisposableStore();
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview);
    this.viewStore.add(view.webview.onDidReceiveMessage((m: Envelope) => this.receive(m)));
    this.viewStore.add(view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    }));
  }

  /** Shows a run (and optionally one of its candidates) in the panel. */
  async reveal(runId?: string, candidateId?: string): Promise<void> {
    if (runId) this.selectedRunId = runId;
    await vscode.commands.executeCommand(`${SidePanel.viewId}.focus`);
    this.sendSnapshot();
    if (runId && candidateId) this.post(CandidateFocused, { runId, id: candidateId });
  }

  private post<T extends NotificationType<string, unknown>>(type: T, params: ParamsOf<T>): void {
    if (!this.view || !this.ready) return; // the snapshot after `ready` carries whatever is missed here
    void this.view.webview.postMessage({ kind: 'notification', method: type.method, params } satisfies Envelope);
  }

  private sendSnapshot(): void {
    const runs = this.runs.headers();
    if (!this.selectedRunId || !this.runs.get(this.selectedRunId)) this.selectedRunId = runs.sort((a, b) => b.startedAt - a.startedAt)[0]?.runId;
    const run = this.selectedRunId ? this.runs.get(this.selectedRunId)?.view : undefined;
    const winners = this.selectedRunId ? this.runs.winnersFor(this.selectedRunId) : [];
    this.post(StateSnapshot, { runs, selectedRunId: this.selectedRunId, run, winners });
  }

  private async receive(m: Envelope): Promise<void> {
    if (!m || typeof m !== 'object') return;
    const p = (m as { params: Record<string, string> }).params;
    try {
      switch ('method' in m ? m.method : '') {
        case Ready.method:
          this.ready = true;
          this.readyCount++;
          this.sendSnapshot();
          return;
        case SelectRun.method:
          this.selectedRunId = p.runId;
          this.sendSnapshot();
          return;
        case StopRun.method: return await this.actions.stop(p.runId);
        case ResumeRun.method: return await this.actions.resume(p.runId);
        case PreviewCandidate.method: return await this.actions.preview(p.runId, p.id);
        case AcceptCandidate.method: return await this.actions.accept(p.runId, p.id);
        case OpenProfileReport.method: return await this.actions.profileReport(p.runId, p.id);
        case GetCandidateDetails.method: {
          if (m.kind !== 'request') return;
          const result = await this.runs.details(p.runId, p.id).catch((e: Error) => ({ error: e.message }));
          void this.view?.webview.postMessage({ kind: 'response', id: m.id, result } satisfies Envelope);
          return;
        }
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`KernelEvolve: ${(e as Error).message}`);
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const csp = [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>KernelEvolve</title>
</head>
<body>
<div id="root"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.viewStore.dispose();
    this.store.dispose();
  }
}
