// CodeLenses over each kernel: "Evolve | Profile" always, and, once a run found a faster correct variant,
// "1.84x faster variant — Preview | Accept | Dismiss".
import * as vscode from 'vscode';
import { isVariantApplied } from './acceptPlan';
import { DisposableStore } from './disposables';
import { grammarFor, KernelLocator } from '../engine/kernelLocator';
import type { RunManager } from './runManager';
import { candidateFigure } from './runState';

export class KernelCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly store = new DisposableStore();
  private readonly changed = this.store.add(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly runs: RunManager) {
    this.store.add(runs.onDidChangeRuns(() => this.changed.fire()));
    this.store.add(runs.onDidUpdate((d) => { if (d.header?.best || d.header?.status) this.changed.fire(); }));
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const grammar = grammarFor(doc.languageId) ?? grammarFor(doc.fileName);
    if (!grammar || doc.uri.scheme !== 'file') return [];
    const locator = await KernelLocator.get();
    const lenses: vscode.CodeLens[] = [];
    const text = doc.getText();
    for (const k of locator.find(text, grammar)) {
      const range = new vscode.Range(k.startLine, 0, k.startLine, 0);
      const best = this.runs.bestFor(doc.uri.fsPath, k.name);
      // A variant already in the editor (accepted, not undone) is not offered again; after an Undo it is.
      const inEditor = best && isVariantApplied({
        locator, grammar, kernel: k.name, baseline: best.run.baseline?.source ?? '', candidate: best.candidate.source, current: text,
      });
      const dismissed = best ? undefined : this.runs.dismissedBestFor(doc.uri.fsPath, k.name);
      if (dismissed) {
        lenses.push(new vscode.CodeLens(range, { title: `$(history) ${candidateFigure(dismissed.candidate)} variant dismissed — Offer Again`, command: 'kernelEvolve.offerCandidateAgain', arguments: [dismissed.run.runId, dismissed.candidate.id] }));
      }
      if (best && !inEditor) {
        const args = [best.run.runId, best.candidate.id];
        lenses.push(
          new vscode.CodeLens(range, { title: `$(rocket) ${candidateFigure(best.candidate)} faster variant (${best.candidate.id}) — Preview`, command: 'kernelEvolve.previewCandidate', arguments: args }),
          new vscode.CodeLens(range, { title: 'Accept', command: 'kernelEvolve.acceptCandidate', arguments: args }),
          new vscode.CodeLens(range, { title: 'Dismiss', command: 'kernelEvolve.dismissCandidate', arguments: args }),
        );
      }
      const pos = doc.positionAt(k.start);
      const at = [doc.uri, pos.line, pos.character];
      lenses.push(
        new vscode.CodeLens(range, { title: `KernelEvolve: Evolve ${k.name}`, command: 'kernelEvolve.evolveAtCursor', arguments: at }),
        new vscode.CodeLens(range, { title: 'Profile', command: 'kernelEvolve.profileAtCursor', arguments: at }),
      );
    }
    return lenses;
  }

  dispose(): void {
    this.store.dispose();
  }
}
