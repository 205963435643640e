// CodeLenses for starting from PyTorch: "Write a kernel for <name>" over each function or nn.Module that computes
// with torch or numpy (named, since a file may hold several, each lens at the top of its own definition), and on a KernelBench-format problem file "Evolve this problem" over its Model, with the
// best correct ModelNew once a run found one ("2.10x (1.90-2.30) kernel c0003 — Preview | Accept", the figure
// shown for it everywhere).
import * as vscode from 'vscode';
import { isKernelBenchProblem, MODEL_NEW } from '../engine/kernelBenchProblem';
import { findOperators } from '../engine/operatorSource';
import { DisposableStore } from './disposables';
import type { RunManager } from './runManager';
import { candidateFigure } from './runState';

export class OperatorCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly store = new DisposableStore();
  private readonly changed = this.store.add(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly runs: RunManager) {
    this.store.add(runs.onDidChangeRuns(() => this.changed.fire()));
    this.store.add(runs.onDidUpdate((d) => { if (d.header?.best || d.header?.status) this.changed.fire(); }));
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (doc.uri.scheme !== 'file') return [];
    const text = doc.getText();
    if (isKernelBenchProblem(text)) {
      const line = Math.max(0, text.split('\n').findIndex((l) => /^class\s+Model\b/.test(l)));
      const range = new vscode.Range(line, 0, line, 0);
      const lenses = [new vscode.CodeLens(range, { title: 'KernelEvolve: Write a kernel (evolve this problem)', command: 'kernelEvolve.evolveProblem', arguments: [doc.uri] })];
      const best = this.runs.bestFor(doc.uri.fsPath, MODEL_NEW);
      if (best) {
        const args = [best.run.runId, best.candidate.id];
        lenses.push(
          new vscode.CodeLens(range, { title: `$(rocket) ${candidateFigure(best.candidate)} kernel ${best.candidate.id} — Preview`, command: 'kernelEvolve.previewCandidate', arguments: args }),
          new vscode.CodeLens(range, { title: 'Accept', command: 'kernelEvolve.acceptCandidate', arguments: args }),
        );
      }
      return lenses;
    }
    return findOperators(text).map((op) => new vscode.CodeLens(new vscode.Range(op.startLine, 0, op.startLine, 0), {
      title: `KernelEvolve: Write a kernel for ${op.name}`, command: 'kernelEvolve.writeKernel', arguments: [doc.uri, op.startLine],
    }));
  }

  dispose(): void {
    this.store.dispose();
  }
}
