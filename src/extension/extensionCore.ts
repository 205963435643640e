// Everything the extension does, built on first use (a command, a CodeLens request, the panel shown): the
// panel, the commands, the CodeLenses, the virtual documents, the runs of this workspace read back from its
// run store. Bundled apart from extension.ts so that activating loads none of it (tree-sitter, shiki, ssh2,
// openai and the engine stay unloaded until a user needs them).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { CANDIDATE_SCHEME, CandidateDocuments } from './candidateDocuments';
import { editorHostOptions, registerCommands, reportEarlyFailure } from './commands';
import { DisposableStore } from './disposables';
import { InlineDiffs } from './inlineDiff';
import { KernelCodeLens } from './kernelCodeLens';
import { OperatorCodeLens } from './operatorCodeLens';
import { REPORT_SCHEME, ReportDocuments } from './reportDocuments';
import { RunManager } from './runManager';
import { SidePanel } from './sidePanel';
import { registerWriteKernel } from './writeKernelCommand';

export interface ExtensionCore {
  runs: RunManager;
  panel: SidePanel;
  lens: KernelCodeLens;
  /** "Write a kernel for this" over PyTorch/numpy operators (Python files). */
  operatorLens: OperatorCodeLens;
  inlineDiffs: InlineDiffs;
  /** Command id -> implementation; extension.ts registers them. */
  commands: Map<string, (...args: any[]) => unknown>;
  documents: Map<string, vscode.TextDocumentContentProvider>;
  log: vscode.OutputChannel;
  /** Resolves once the run store has been read. */
  loaded: Promise<void>;
}

export function createCore(context: vscode.ExtensionContext, store: DisposableStore): ExtensionCore {
  const log = store.add(vscode.window.createOutputChannel('KernelEvolve'));
  const folder = vscode.workspace.workspaceFolders?.[0];
  const storeRoot = folder ? path.join(folder.uri.fsPath, '.kernelevolve', 'runs') : undefined;
  const runs = store.add(new RunManager(storeRoot, log, context.workspaceState));
  const reports = new ReportDocuments();
  const apiKey = new ApiKeyStore(context.secrets);
  const run = async (command: string, ...args: unknown[]) => { await vscode.commands.executeCommand(command, ...args); };
  const panel = store.add(new SidePanel(context.extensionUri, runs, {
    preview: (r, id) => run('kernelEvolve.previewCandidate', r, id),
    accept: (r, id) => run('kernelEvolve.acceptCandidate', r, id),
    profileReport: (r, id) => run('kernelEvolve.showProfileReport', r, id),
    stop: (r) => run('kernelEvolve.stop', r),
    resume: (r) => run('kernelEvolve.resume', r),
  }));
  const lens = store.add(new KernelCodeLens(runs));
  const inlineDiffs = store.add(new InlineDiffs());
  const commandContext = { runs, panel, reports, apiKey, log, inlineDiffs };
  const commands = new Map<string, (...args: any[]) => unknown>();
  const reg = (id: string, fn: (...args: any[]) => unknown) => { commands.set(id, fn); return { dispose() { commands.delete(id); } }; };
  registerCommands(commandContext, reg);
  registerWriteKernel({ runs, panel, apiKey, hostOptions: editorHostOptions }, reg);
  const operatorLens = store.add(new OperatorCodeLens(runs));
  store.add(runs.onDidFailEarly((f) => void reportEarlyFailure(commandContext, f)));
  const documents = new Map<string, vscode.TextDocumentContentProvider>([[CANDIDATE_SCHEME, new CandidateDocuments(runs)], [REPORT_SCHEME, reports]]);
  return { runs, panel, lens, operatorLens, inlineDiffs, commands, documents, log, loaded: runs.loadStored() };
}

export { DisposableStore } from './disposables';
export { runTestSuiteIfAsked } from './testBridge';
