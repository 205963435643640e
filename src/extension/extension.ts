// Activation: the panel, the commands, the CodeLenses, the virtual documents, and the runs of this
// workspace read back from its run store.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { CANDIDATE_SCHEME, CandidateDocuments } from './candidateDocuments';
import { editorHostOptions, registerCommands, reportEarlyFailure } from './commands';
import { DisposableStore } from './disposables';
import { KernelCodeLens } from './kernelCodeLens';
import { OperatorCodeLens } from './operatorCodeLens';
import { registerWriteKernel } from './writeKernelCommand';
import { REPORT_SCHEME, ReportDocuments } from './reportDocuments';
import { RunManager } from './runManager';
import { SidePanel } from './sidePanel';
import { runTestSuiteIfAsked } from './testBridge';

/** What the extension hands to its in-editor test suites (and to other extensions). */
export interface KernelEvolveApi {
  runs: RunManager;
  panel: SidePanel;
}

const KERNEL_LANGUAGES = ['python', 'cpp', 'c', 'cuda', 'cuda-cpp'];

export async function activate(context: vscode.ExtensionContext): Promise<KernelEvolveApi> {
  const store = new DisposableStore();
  context.subscriptions.push(store);
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
  store.add(vscode.window.registerWebviewViewProvider(SidePanel.viewId, panel));
  store.add(vscode.workspace.registerTextDocumentContentProvider(CANDIDATE_SCHEME, new CandidateDocuments(runs)));
  store.add(vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports));
  const lens = store.add(new KernelCodeLens(runs));
  store.add(vscode.languages.registerCodeLensProvider(KERNEL_LANGUAGES.map((language) => ({ language, scheme: 'file' })), lens));
  const commandContext = { runs, panel, reports, apiKey, log };
  for (const d of registerCommands(commandContext)) store.add(d);
  store.add(vscode.languages.registerCodeLensProvider({ language: 'python', scheme: 'file' }, store.add(new OperatorCodeLens(runs))));
  for (const d of registerWriteKernel({ runs, panel, apiKey, hostOptions: editorHostOptions })) store.add(d);
  store.add(runs.onDidFailEarly((f) => void reportEarlyFailure(commandContext, f)));

  await runs.loadStored();
  const api: KernelEvolveApi = { runs, panel };
  void runTestSuiteIfAsked((line) => log.appendLine(line));
  return api;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions; running runs are aborted by RunManager.dispose.
}
