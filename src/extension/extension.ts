// Activation: registers what the editor asks for (the commands, the CodeLens provider, the panel's view, the
// virtual documents) as thin forwarders, and loads the extension itself (extensionCore.ts, a bundle of its
// own) on the first use of any of them. Activating so costs a few milliseconds; see docs/benchmarks.md.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ExtensionCore } from './extensionCore';
import type { RunManager } from './runManager';
import type { SidePanel } from './sidePanel';

/** What the extension hands to its in-editor test suites (and to other extensions). */
export interface KernelEvolveApi {
  runs: RunManager;
  panel: SidePanel;
  /** Milliseconds activate() took, and those the first use spent loading the core. */
  timings: { activateMs: number; coreLoadMs?: number };
}

const KERNEL_LANGUAGES = ['python', 'cpp', 'c', 'cuda', 'cuda-cpp'];
const CANDIDATE_SCHEME = 'kernelevolve-candidate';
const REPORT_SCHEME = 'kernelevolve-report';
const PANEL_VIEW = 'kernelEvolve.runs';

type CoreModule = typeof import('./extensionCore');

export function activate(context: vscode.ExtensionContext): KernelEvolveApi {
  const started = performance.now();
  const timings: KernelEvolveApi['timings'] = { activateMs: 0 };
  let core: ExtensionCore | undefined;
  const lensChanged = new vscode.EventEmitter<void>();
  const documentChanged = new Map([CANDIDATE_SCHEME, REPORT_SCHEME].map((scheme) => [scheme, new vscode.EventEmitter<vscode.Uri>()]));
  context.subscriptions.push(lensChanged, ...documentChanged.values());
  const load = (): ExtensionCore => {
    if (core) return core;
    const t = performance.now();
    // A separate bundle, required at run time: the literal path keeps esbuild from inlining it.
    const mod = require(path.join(__dirname, 'extensionCore.js')) as CoreModule;
    const store = new mod.DisposableStore();
    context.subscriptions.push(store);
    core = mod.createCore(context, store);
    store.add(core.lens.onDidChangeCodeLenses(() => lensChanged.fire()));
    store.add(core.inlineDiffs.onDidChangeCodeLenses(() => lensChanged.fire()));
    store.add(core.operatorLens.onDidChangeCodeLenses(() => lensChanged.fire()));
    for (const [scheme, provider] of core.documents) {
      if (provider.onDidChange) store.add(provider.onDidChange((uri) => documentChanged.get(scheme)?.fire(uri)));
    }
    timings.coreLoadMs = performance.now() - t;
    core.log.appendLine(`Activated in ${timings.activateMs.toFixed(1)} ms; the core loaded in ${timings.coreLoadMs.toFixed(0)} ms on first use.`);
    return core;
  };

  for (const cmd of (context.extension.packageJSON.contributes?.commands ?? []) as { command: string }[]) {
    context.subscriptions.push(vscode.commands.registerCommand(cmd.command, (...args: unknown[]) => {
      const fn = load().commands.get(cmd.command);
      if (!fn) throw new Error(`KernelEvolve has no command ${cmd.command}.`);
      return fn(...args);
    }));
  }
  context.subscriptions.push(
    vscode.languages.registerCodeLensProvider(KERNEL_LANGUAGES.map((language) => ({ language, scheme: 'file' })), {
      onDidChangeCodeLenses: lensChanged.event,
      provideCodeLenses: async (doc) => {
        const c = load();
        return [...c.inlineDiffs.provideCodeLenses(doc), ...await c.lens.provideCodeLenses(doc), ...(doc.languageId === 'python' ? c.operatorLens.provideCodeLenses(doc) : [])];
      },
    }),
    vscode.window.registerWebviewViewProvider(PANEL_VIEW, { resolveWebviewView: (view) => load().panel.resolveWebviewView(view) }),
    ...[CANDIDATE_SCHEME, REPORT_SCHEME].map((scheme) => vscode.workspace.registerTextDocumentContentProvider(scheme, {
      // VS Code reads onDidChange when the provider is registered: an emitter of our own, fed once the core is up.
      onDidChange: documentChanged.get(scheme)!.event,
      provideTextDocumentContent: (uri, token) => load().documents.get(scheme)!.provideTextDocumentContent(uri, token),
    })),
  );
  if (process.env.KERNELEVOLVE_TEST_SUITE) {
    setTimeout(() => {
      const c = load();
      void c.loaded.then(() => (require(path.join(__dirname, 'extensionCore.js')) as CoreModule).runTestSuiteIfAsked((line) => c.log.appendLine(line)));
    }, 0);
  }
  timings.activateMs = performance.now() - started;
  return {
    get runs() { return load().runs; },
    get panel() { return load().panel; },
    timings,
  };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions; running runs are aborted by RunManager.dispose.
}
