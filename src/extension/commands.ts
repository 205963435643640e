// The commands: evolve / profile the kernel at the cursor, stop, resume, check hosts, set the API key,
// and the candidate actions (preview, accept, dismiss, profile report) behind the CodeLens and the panel.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LlmClient } from '../engine/llm/llmClient';
import { loadSpec, type KernelSpec } from '../engine/spec';
import type { HostOptions } from '../remote/hostConfig';
import { createHosts } from '../remote/hostConfig';
import '../remote/hosts';
import { evaluateOnce } from '../run/evaluateOnce';
import { applyEdits, planAccept } from './acceptPlan';
import type { ApiKeyStore } from './apiKey';
import { candidateUri } from './candidateDocuments';
import { planDeviceAccept } from './deviceAccept';
import { kernelAtCursor, UserFacingError, type KernelTarget } from './kernelAtCursor';
import { grammarFor, KernelLocator } from '../engine/kernelLocator';
import { profileReportMarkdown } from './profileReport';
import type { ReportDocuments } from './reportDocuments';
import type { RunManager } from './runManager';
import { candidateFigure } from './runState';
import { readSettings, reportSettingsError, type EvolveSettings } from './settings';
import type { SidePanel } from './sidePanel';
import { addGpuHost } from './addGpuHost';
import type { InlineDiffs } from './inlineDiff';
import { anyHostRuns, describeReadiness } from './hostReadiness';
import type { EarlyFailure } from './runManager';
import { diagnoseRunFailure, FIX_LABELS, type FailureFix } from './runFailure';
import { draftSpec, type SpecDraft } from './specDraft';
import { refineSpecWithLlm } from './specDraftLlm';
import { findSpecs } from './specLocator';
import { acceptOperatorKernel, isOperatorRun } from './writeKernelCommand';

export interface CommandContext {
  runs: RunManager;
  panel: SidePanel;
  reports: ReportDocuments;
  apiKey: ApiKeyStore;
  log: vscode.OutputChannel;
  inlineDiffs: InlineDiffs;
}

const SPEC_SEARCH_EXCLUDE = '{**/node_modules/**,**/.kernelevolve/**,**/.git/**,**/.venv/**,**/site-packages/**}';

/** Host prompts through the editor: trust an unknown host key (never a mismatched one), unlock a key; the local
 *  host's warm-worker server ends with the extension host (an editor killed mid-run leaves no harness behind). */
export function editorHostOptions(): HostOptions {
  return {
    warmServerOwner: process.pid,
    onUnknownHostKey: async (host, fingerprint) => (await vscode.window.showWarningMessage(
      `KernelEvolve: ${host} offers a host key that is not in known_hosts (${fingerprint}). Trust it and record it?`,
      { modal: true }, 'Trust and Connect')) === 'Trust and Connect',
    askPassphrase: async (keyFile) => vscode.window.showInputBox({
      title: 'KernelEvolve: SSH key passphrase', prompt: `Passphrase for ${keyFile}`, password: true, ignoreFocusOut: true,
    }),
  };
}

function requireTrust(): void {
  if (!vscode.workspace.isTrusted) {
    throw new UserFacingError('KernelEvolve compiles and runs code, which this untrusted workspace does not allow. Trust the workspace to evolve or profile kernels.');
  }
}

/** The spec of the kernel: found by content in the workspace, or drafted next to the source for review. */
async function specFor(ctx: CommandContext, target: KernelTarget, settings: EvolveSettings): Promise<KernelSpec | undefined> {
  const sourcePath = target.document.uri.fsPath;
  const files = (await vscode.workspace.findFiles('**/*.py', SPEC_SEARCH_EXCLUDE, 5000)).map((u) => u.fsPath);
  // The folder of the source is searched even when it is outside the workspace.
  const beside = (await fs.readdir(path.dirname(sourcePath)).catch(() => [])).filter((f) => f.endsWith('.py')).map((f) => path.join(path.dirname(sourcePath), f));
  const specs = await findSpecs([...new Set([...files, ...beside])], sourcePath, target.site.name);
  if (specs.length) return loadSpec(specs[0].specPath);

  // Files of the workspace that use the kernel's module tell which dtypes it is called with.
  const moduleName = path.basename(sourcePath).replace(/\.\w+$/, '');
  const callers = (await Promise.all(files.filter((f) => f !== sourcePath).slice(0, 400).map((f) => fs.readFile(f, 'utf8').catch(() => ''))))
    .filter((t) => t.includes(target.site.name) || new RegExp(`\\b${moduleName}\\b`).test(t));
  const heuristic = draftSpec(await KernelLocator.get(), target.site, sourcePath, target.document.getText(), callers);
  let draft: SpecDraft = heuristic;
  let how = 'from how the kernel indexes its arrays';
  if (settings.model) {
    const client = new LlmClient({ model: settings.model, baseURL: settings.baseURL, apiKey: await ctx.apiKey.get(), timeoutS: 120, maxRetries: 1 });
    const refined = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `KernelEvolve: drafting a spec for ${target.site.name} with ${settings.model}…` },
      () => refineSpecWithLlm(client, draft, path.basename(sourcePath), target.document.getText(), target.site.name));
    draft = { ...refined, estimate: heuristic.estimate, warning: heuristic.warning };
    how = refined.refined ? `and had ${settings.model} review it` : `(${settings.model} could not review it: ${refined.note})`;
  }
  let specPath = path.join(path.dirname(sourcePath), draft.fileName);
  for (let i = 2; await fs.access(specPath).then(() => true, () => false); i++) specPath = path.join(path.dirname(sourcePath), draft.fileName.replace(/\.py$/, `_${i}.py`));
  await fs.writeFile(specPath, draft.text, 'utf8');
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(specPath), { preview: false });
  const message = `KernelEvolve found no spec for ${target.site.name} and drafted ${path.basename(specPath)} ${how}. ${draft.estimate ? `Estimated ${draft.estimate}. ` : ''}Review its shapes, inputs and launch(), then run Evolve again.`;
  if (draft.warning) void vscode.window.showWarningMessage(`${message} Warning: ${draft.warning}`);
  else void vscode.window.showInformationMessage(message);
  return undefined;
}

async function withErrors<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UserFacingError) void vscode.window.showWarningMessage(`KernelEvolve: ${e.message}`);
    else if ((e as Error).name === 'ConfigError') await reportSettingsError(e);
    else void vscode.window.showErrorMessage(`KernelEvolve: ${what} failed: ${(e as Error).message}`);
    return undefined;
  }
}

export type CommandRegistrar = (id: string, fn: (...args: any[]) => Promise<unknown>) => vscode.Disposable;

export function registerCommands(ctx: CommandContext, reg: CommandRegistrar = (id, fn) => vscode.commands.registerCommand(id, fn)): vscode.Disposable[] {
  const { runs, panel, reports } = ctx;

  const evolve = (uri?: vscode.Uri, line?: number, character?: number) => withErrors('Evolve', async () => {
    requireTrust();
    const target = await kernelAtCursor(uri, line, character);
    const settings = readSettings(target.document.uri);
    const spec = await specFor(ctx, target, settings);
    if (!spec) return undefined;
    if (target.document.isDirty) await target.document.save(); // the hosts read the file from disk
    const runId = await runs.start({ spec, settings, apiKey: await ctx.apiKey.get(), hostOptions: editorHostOptions() });
    await panel.reveal(runId);
    return runId;
  });

  const resume = (runId?: string) => withErrors('Resume', async () => {
    requireTrust();
    const candidates = runs.headers().filter((r) => !runs.isActive(r.runId));
    const id = runId ?? (await vscode.window.showQuickPick(candidates.map((r) => ({ label: `${r.kernel} · ${r.runId}`, description: `${r.status}${r.reason ? ' (' + r.reason + ')' : ''} · ${r.evaluated} evaluated`, runId: r.runId })),
      { title: 'KernelEvolve: Resume Run', placeHolder: candidates.length ? 'Pick a run to continue' : 'No stopped run in this workspace' }))?.runId;
    if (!id) return undefined;
    const run = runs.get(id);
    if (!run) throw new UserFacingError(`There is no run ${id} in this workspace's run store.`);
    if (runs.isActive(id)) throw new UserFacingError(`Run ${id} is still running.`);
    const spec = await loadSpec(run.view.specPath);
    const settings = readSettings(vscode.Uri.file(spec.sourcePath));
    await runs.start({ spec, settings, apiKey: await ctx.apiKey.get(), hostOptions: editorHostOptions() }, id);
    await panel.reveal(id);
    return id;
  });

  const stop = (runId?: string) => withErrors('Stop', async () => {
    const active = runs.activeRuns();
    const id = runId ?? (active.length <= 1 ? active[0]?.runId : (await vscode.window.showQuickPick(active.map((r) => ({ label: `${r.view.kernel} · ${r.runId}`, runId: r.runId })), { title: 'KernelEvolve: Stop Run' }))?.runId);
    if (!id) {
      void vscode.window.showInformationMessage('KernelEvolve: no run is in progress.');
      return false;
    }
    return runs.stop(id);
  });

  const preview = (runId: string, id: string) => withErrors('Preview', async () => {
    const run = runs.get(runId);
    const c = run?.candidates.get(id);
    const base = run?.baseline;
    if (!run || !c || !base) throw new UserFacingError(`Candidate ${id} of run ${runId} is not known.`);
    const title = `${run.view.kernel}: baseline ↔ ${id}${c.verdict?.status === 'ok' ? ` (${candidateFigure(c)})` : ''}`;
    await vscode.commands.executeCommand('vscode.diff', candidateUri(runId, base.id, run.view.sourcePath), candidateUri(runId, id, run.view.sourcePath), title, { preview: true });
  });

  const accept = (runId: string, id: string) => withErrors('Accept', async () => {
    const run = runs.get(runId);
    if (run && isOperatorRun(run)) return acceptOperatorKernel(run, id); // a kernel for a PyTorch operator
    const c = run?.candidates.get(id);
    const base = run?.baseline;
    if (!run || !c || !base) throw new UserFacingError(`Candidate ${id} of run ${runId} is not known.`);
    const uri = vscode.Uri.file(run.view.sourcePath);
    const doc = await vscode.workspace.openTextDocument(uri).then(undefined, () => undefined);
    if (!doc) throw new UserFacingError(`${run.view.sourcePath} no longer exists; the variant cannot be applied.`);
    const grammar = grammarFor(doc.languageId) ?? grammarFor(doc.fileName) ?? 'cpp';
    const locator = await KernelLocator.get(); // the per-device launcher and the plan both find functions with it
    // The same kernel won on other hardware too: a launcher choosing per device keeps every hardware's winner.
    const byDevice = planDeviceAccept({ runDir: run.view.runDir, kernel: { sourcePath: run.view.sourcePath, kernel: run.view.kernel }, baseline: base.source, candidateId: id });
    const plan = planAccept({
      locator, grammar, kernel: run.view.kernel, fileLabel: path.basename(uri.fsPath),
      baseline: base.source, candidate: byDevice.kind === 'by-device' ? byDevice.source : c.source, current: doc.getText(),
    });
    if (!plan.ok) throw new UserFacingError(plan.reason);
    const expected = applyEdits(doc.getText(), plan.edits);
    await vscode.window.showTextDocument(doc, { preview: false });
    // Into the editor as an inline diff, hunk by hunk; nothing is written to disk until the user saves.
    const what = byDevice.kind === 'by-device' ? `${id} (${candidateFigure(c)}) by device` : `${id} (${candidateFigure(c)})`;
    const count = await ctx.inlineDiffs.start(doc, plan.edits, expected, what);
    if (count < 0) throw new UserFacingError(`VS Code refused the edit to ${path.basename(uri.fsPath)} (is it read-only?).`);
    if (doc.getText() !== expected) ctx.log.appendLine(`Accept ${runId}/${id}: the document differs from the planned text after the edit.`);
    const written = byDevice.kind === 'by-device' ? ` as ${byDevice.message}` : '';
    const note = byDevice.kind === 'plain' && 'note' in byDevice ? ` ${byDevice.note}` : '';
    if (written || note) ctx.log.appendLine(`Accept ${runId}/${id}:${written}${note}`);
    void vscode.window.showInformationMessage(`KernelEvolve: ${id} (${candidateFigure(c)}) is in ${path.basename(uri.fsPath)}${written} as ${count} change(s)${plan.relocated ? ', placed after your edits' : ''}: Accept or Reject each (Ctrl+Shift+Y / Ctrl+Shift+N), then save. Undo (Ctrl+Z) takes it out.${note}`);
    return true;
  });

  const dismiss = (runId: string, id: string) => withErrors('Dismiss', () => runs.dismiss(runId, id));
  const offerAgain = (runId: string, id: string) => withErrors('Offer again', () => runs.undismiss(runId, id));

  const profileReport = (runId: string, id: string) => withErrors('Profile report', async () => {
    const run = runs.get(runId);
    const c = run?.candidates.get(id);
    if (!run || !c) throw new UserFacingError(`Candidate ${id} of run ${runId} is not known.`);
    await reports.open(`${runId}/${id}`, `${run.view.kernel}-${id}-profile`, profileReportMarkdown(`${run.view.kernel} — ${id}`, c.verdict, c));
  });

  const profileAtCursor = (uri?: vscode.Uri, line?: number, character?: number) => withErrors('Profile', async () => {
    requireTrust();
    const target = await kernelAtCursor(uri, line, character);
    const settings = readSettings(target.document.uri);
    const spec = await specFor(ctx, target, settings);
    if (!spec) return undefined;
    if (target.document.isDirty) await target.document.save();
    const verdict = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `KernelEvolve: profiling ${target.site.name}…`, cancellable: true },
      (progress, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort());
        return evaluateOnce({
          config: settings.config,
          hostOptions: editorHostOptions(),
          job: { id: `profile-${Date.now().toString(36)}`, specPath: spec.specPath, baselinePath: spec.sourcePath, candidateSource: target.document.getText(), candidateFileName: path.basename(spec.sourcePath), profile: true },
          signal: ac.signal,
          onStart: (host) => progress.report({ message: `on ${host}` }),
          onLog: (_level, message) => ctx.log.appendLine(`Profile ${target.site.name}: ${message}`),
        });
      });
    const where = verdict.placement?.host ?? verdict.host;
    await reports.open(`profile-${Date.now().toString(36)}`, `${target.site.name}-profile`, profileReportMarkdown(`${target.site.name} as it stands${where ? ` (${where})` : ''}`, verdict));
    return verdict;
  });

  const checkHosts = () => withErrors('Check Hosts', async () => {
    requireTrust();
    const settings = readSettings();
    const hosts = createHosts(settings.config, [], editorHostOptions());
    try {
      const checks = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `KernelEvolve: checking ${hosts.length} host(s)…` },
        () => Promise.all(hosts.map((h) => h.check().catch((e: Error) => ({ host: h.name, reachable: false, facts: {}, error: e.message })))));
      ctx.log.appendLine(`Hosts checked ${new Date().toISOString()}:`);
      for (const c of checks) {
        ctx.log.appendLine(`  ${describeReadiness(c)}`);
        ctx.log.appendLine(`    ${c.reachable ? 'reachable' : 'UNREACHABLE'}${c.error ? ' — ' + c.error : ''} ${Object.entries(c.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`);
      }
      ctx.log.show(true);
      // Per host, what each backend needs and has: "local ✓" on a machine without a GPU misled.
      const summary = checks.map(describeReadiness).join('; ');
      const noGpu = !anyHostRuns(checks, 'triton') && !anyHostRuns(checks, 'cuda');
      const bad = checks.some((c) => !c.reachable);
      const show = bad || noGpu ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(`KernelEvolve hosts: ${summary}.${noGpu ? ' No host can run Triton or CUDA kernels.' : ''}`, ...(noGpu ? ['Add GPU Host'] : [])).then((a) => {
        if (a === 'Add GPU Host') void vscode.commands.executeCommand('kernelEvolve.addGpuHost');
      });
      return checks;
    } finally {
      await Promise.all(hosts.map((h) => h.dispose()));
    }
  });

  return [
    reg('kernelEvolve.evolveAtCursor', evolve),
    reg('kernelEvolve.stop', stop),
    reg('kernelEvolve.resume', resume),
    reg('kernelEvolve.profileAtCursor', profileAtCursor),
    reg('kernelEvolve.checkHosts', checkHosts),
    reg('kernelEvolve.setApiKey', () => ctx.apiKey.promptAndStore()),
    reg('kernelEvolve.addGpuHost', () => withErrors('Add GPU Host', async () => { requireTrust(); return addGpuHost(ctx.log, editorHostOptions()); })),
    reg('kernelEvolve.previewCandidate', preview),
    reg('kernelEvolve.acceptCandidate', accept),
    reg('kernelEvolve.dismissCandidate', dismiss),
    reg('kernelEvolve.offerCandidateAgain', offerAgain),
    reg('kernelEvolve.acceptHunk', (uri?: vscode.Uri, i?: number) => ctx.inlineDiffs.accept(uri, i)),
    reg('kernelEvolve.rejectHunk', (uri?: vscode.Uri, i?: number) => ctx.inlineDiffs.reject(uri, i)),
    reg('kernelEvolve.acceptAllHunks', (uri?: vscode.Uri) => ctx.inlineDiffs.acceptAll(uri)),
    reg('kernelEvolve.rejectAllHunks', (uri?: vscode.Uri) => ctx.inlineDiffs.rejectAll(uri)),
    reg('kernelEvolve.showProfileReport', profileReport),
    reg('kernelEvolve.showPanel', () => panel.reveal()),
  ];
}

/** A run that failed before judging any candidate: the cause in one sentence, the fixes as buttons. */
export async function reportEarlyFailure(ctx: CommandContext, f: EarlyFailure): Promise<void> {
  let localOnly = true;
  try {
    localOnly = readSettings().config.hosts.every((h) => h.type === 'local');
  } catch {
    // a settings problem is reported on its own
  }
  const d = diagnoseRunFailure({ backend: f.spec.backend, kind: f.kind, message: f.message, localOnly, specName: path.basename(f.spec.specPath) });
  const labels = d.fixes.map((x) => FIX_LABELS[x]);
  const picked = await vscode.window.showErrorMessage(`KernelEvolve: ${d.sentence}`, ...labels);
  const fix = d.fixes[labels.indexOf(picked ?? '')] as FailureFix | undefined;
  const open = async (file: string) => { await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file), { preview: false }); };
  switch (fix) {
    case 'addGpuHost': return void (await vscode.commands.executeCommand('kernelEvolve.addGpuHost'));
    case 'openHostSettings': return void (await vscode.commands.executeCommand('workbench.action.openSettings', 'kernelEvolve.hosts'));
    case 'checkHosts': return void (await vscode.commands.executeCommand('kernelEvolve.checkHosts'));
    case 'openSpec': return open(f.spec.specPath);
    case 'openSource': return open(f.spec.sourcePath);
    case 'showRun': return void (await ctx.panel.reveal(f.runId));
    default: return undefined;
  }
}
