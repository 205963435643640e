// "Write a kernel for this": on a PyTorch (or numpy) function or nn.Module, draft a KernelBench-format problem
// whose reference and baseline are that code (inputs from a call site in the workspace, else asked), open it
// for review, and evolve it with the LLM operator drafting ModelNew kernels; accepting writes the kernel file
// next to the module and makes the operator call it (operatorAccept.ts), as one undoable edit.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MODEL_NEW } from '../engine/kernelBenchProblem';
import { findOperators, pythonKernelNames, type PythonOperator } from '../engine/operatorSource';
import { draftProblem, inputsFromCallSites, parseShapeText, problemOrigin, type InputSpec } from '../engine/problemDraft';
import { loadSpec } from '../engine/spec';
import type { ApiKeyStore } from './apiKey';
import { UserFacingError } from './kernelAtCursor';
import { planOperatorAccept } from './operatorAccept';
import type { RunManager } from './runManager';
import { candidateFigure, type RunState } from './runState';
import { readSettings, type EvolveSettings } from './settings';
import type { SidePanel } from './sidePanel';

export interface WriteKernelContext {
  runs: RunManager;
  panel: SidePanel;
  apiKey: ApiKeyStore;
  hostOptions: () => Parameters<RunManager['start']>[0]['hostOptions'];
}

const EXCLUDE = '{**/node_modules/**,**/.kernelevolve/**,**/.git/**,**/.venv/**,**/site-packages/**}';

/** What is missing for the LLM operator, in one sentence, or undefined when it can be asked. */
export async function llmMissing(settings: EvolveSettings, apiKey: ApiKeyStore): Promise<string | undefined> {
  const key = (await apiKey.get()) ?? process.env.OPENAI_API_KEY;
  const lacks = [
    ...(settings.model ? [] : ['model (the setting kernelEvolve.llm.model)']),
    ...(settings.baseURL || key ? [] : ['endpoint (kernelEvolve.llm.baseURL, for a local or hosted OpenAI-compatible server) or API key (KernelEvolve: Set API Key)']),
  ];
  if (!lacks.length) return undefined;
  return `Write a kernel drafts kernels with an LLM through an OpenAI-compatible endpoint, and this workspace has no ${lacks.join(' and no ')}. Set kernelEvolve.llm.baseURL and kernelEvolve.llm.model, then the key with KernelEvolve: Set API Key.`;
}

async function askLlmSetup(message: string): Promise<void> {
  const pick = await vscode.window.showWarningMessage(`KernelEvolve: ${message}`, 'Open Settings', 'Set API Key');
  if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'kernelEvolve.llm');
  if (pick === 'Set API Key') await vscode.commands.executeCommand('kernelEvolve.setApiKey');
}

function operatorAt(ops: PythonOperator[], doc: vscode.TextDocument, line: number): PythonOperator | undefined {
  return ops.find((o) => line >= o.startLine && line <= doc.positionAt(o.end).line);
}

/** Each input's sizes and dtype (arrays) or value (scalars), asked one at a time; undefined if cancelled. */
async function askInputs(op: PythonOperator): Promise<InputSpec[] | undefined> {
  const out: InputSpec[] = [];
  for (const p of op.params) {
    const scalar = /^(int|float)\b/.exec(p.annotation ?? '')?.[1] ?? (/^-?\d+$/.test(p.defaultText ?? '') ? 'int' : /^-?[\d.]+(?:e-?\d+)?$/.test(p.defaultText ?? '') ? 'float' : undefined);
    if (scalar) {
      const v = await vscode.window.showInputBox({ title: `KernelEvolve: ${op.name}(${p.name})`, prompt: `The value of ${p.name} (${scalar}) for the benchmark`, value: p.defaultText ?? '1', ignoreFocusOut: true,
        validateInput: (t) => (Number.isFinite(Number(t)) ? undefined : 'a number') });
      if (v === undefined) return undefined;
      out.push({ name: p.name, kind: scalar as 'int' | 'float', value: Number(v) });
      continue;
    }
    const picked = await vscode.window.showQuickPick(
      [{ label: '4096, 4096' }, { label: '1024, 1024' }, { label: '8192' }, { label: 'Other sizes…', other: true }],
      { title: `KernelEvolve: sizes of ${p.name} for ${op.name}`, placeHolder: `No call of ${op.name} in the workspace says; pick or type the sizes of ${p.name} (float32 unless you add a dtype)`, ignoreFocusOut: true },
    );
    if (!picked) return undefined;
    const text = 'other' in picked ? await vscode.window.showInputBox({ title: `KernelEvolve: sizes of ${p.name}`, prompt: 'Sizes, outermost first, and a dtype if not float32: e.g. 4096, 1024 float16', ignoreFocusOut: true,
      validateInput: (t) => (parseShapeText(p.name, t) ? undefined : 'sizes as whole numbers separated by commas, e.g. 4096, 1024') }) : picked.label;
    const spec = text === undefined ? undefined : parseShapeText(p.name, text);
    if (!spec) return undefined;
    out.push(spec);
  }
  return out;
}

async function askInitArgs(op: PythonOperator): Promise<string[] | undefined> {
  const out: string[] = [];
  for (const p of op.initParams) {
    const v = await vscode.window.showInputBox({ title: `KernelEvolve: ${op.name}(${p.name}=…)`, prompt: `The value of __init__'s ${p.name} (a Python expression)`, value: p.defaultText ?? '', ignoreFocusOut: true,
      validateInput: (t) => (t.trim() ? undefined : 'a value is needed') });
    if (v === undefined) return undefined;
    out.push(v.trim());
  }
  return out;
}

async function draftFor(uri: vscode.Uri | undefined, line: number | undefined): Promise<string | undefined> {
  if (!vscode.workspace.isTrusted) throw new UserFacingError('KernelEvolve compiles and runs code, which this untrusted workspace does not allow. Trust the workspace to write kernels.');
  const editor = vscode.window.activeTextEditor;
  const doc = uri ? await vscode.workspace.openTextDocument(uri) : editor?.document;
  if (!doc || doc.languageId !== 'python') throw new UserFacingError('Open a Python file and put the cursor in a function or nn.Module that computes with torch or numpy.');
  const text = doc.getText();
  const ops = findOperators(text);
  const at = line ?? (editor?.document === doc ? editor.selection.active.line : 0);
  let op = operatorAt(ops, doc, at);
  if (!op && ops.length) {
    op = (await vscode.window.showQuickPick(ops.map((o) => ({ label: o.name, description: `${o.kind}, ${o.framework}`, o })), { title: 'KernelEvolve: Write a kernel for…' }))?.o;
    if (!op) return undefined;
  }
  if (!op) {
    const kernels = pythonKernelNames(text);
    throw new UserFacingError(kernels.length
      ? `${path.basename(doc.fileName)} has a kernel already (${kernels.join(', ')}), and a function that launches one needs no other: evolve the kernel with its lens "KernelEvolve: Evolve ${kernels[0]}".`
      : `${path.basename(doc.fileName)} has no function or nn.Module that computes with torch or numpy.`);
  }
  const files = (await vscode.workspace.findFiles('**/*.py', EXCLUDE, 2000)).map((u) => u.fsPath).filter((f) => f !== doc.fileName);
  const others = await Promise.all(files.map((f) => fs.readFile(f, 'utf8').catch(() => '')));
  const callers = [text, ...others.filter((t) => t.includes(op!.name))];
  const inputs = inputsFromCallSites(op, callers) ?? await askInputs(op);
  if (!inputs) return undefined;
  const initArgs = op.kind === 'module' ? await askInitArgs(op) : [];
  if (!initArgs) return undefined;
  const moduleFile = path.basename(doc.fileName);
  const draft = draftProblem({ operator: op, moduleText: text, moduleFile, inputs, initArgs });
  let problemPath = path.join(path.dirname(doc.fileName), draft.fileName);
  for (let i = 2; await fs.access(problemPath).then(() => true, () => false); i++) problemPath = problemPath.replace(/(_\d+)?\.py$/, `_${i}.py`);
  await fs.writeFile(problemPath, draft.text, 'utf8');
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(problemPath), { preview: false });
  return problemPath;
}

/** Starts the evolution of a KernelBench-format problem with the LLM operator among the operators. */
async function evolveProblem(ctx: WriteKernelContext, problemPath: string): Promise<string | undefined> {
  const settings = readSettings(vscode.Uri.file(problemPath));
  const missing = await llmMissing(settings, ctx.apiKey);
  if (missing) {
    void askLlmSetup(missing); // not awaited: a notification's promise waits until the user closes it
    return undefined;
  }
  const doc = vscode.workspace.textDocuments.find((d) => d.fileName === problemPath);
  if (doc?.isDirty) await doc.save();
  const spec = await loadSpec(problemPath);
  const operators = settings.operators.includes('llm') ? settings.operators : ['llm', ...settings.operators];
  const runId = await ctx.runs.start({ spec, settings: { ...settings, operators }, apiKey: await ctx.apiKey.get(), hostOptions: ctx.hostOptions() });
  await ctx.panel.reveal(runId);
  return runId;
}

/** Accepting a candidate of a drafted problem: the kernel file next to the operator's module and the call. */
export async function acceptOperatorKernel(run: RunState, candidateId: string): Promise<boolean> {
  const c = run.candidates.get(candidateId);
  if (!c) throw new UserFacingError(`Candidate ${candidateId} of run ${run.runId} is not known.`);
  const problemText = await fs.readFile(run.view.specPath, 'utf8').catch(() => '');
  const origin = problemOrigin(problemText);
  if (!origin) throw new UserFacingError(`${path.basename(run.view.specPath)} was not drafted from an operator (it has no kernelevolve-origin line), so there is no call to replace; the kernel is ${candidateId}'s file in the run folder.`);
  const dir = path.dirname(run.view.specPath);
  const moduleUri = vscode.Uri.file(path.join(dir, origin.moduleFile));
  const doc = await vscode.workspace.openTextDocument(moduleUri).then(undefined, () => undefined);
  if (!doc) throw new UserFacingError(`${origin.moduleFile} is no longer next to ${path.basename(run.view.specPath)}.`);
  const how = await vscode.window.showQuickPick([
    { label: 'Call the kernel', description: `${origin.name} calls the kernel; its code moves to the problem file`, fallback: false },
    { label: 'Call the kernel, keep the original as fallback', description: 'for devices and dtypes the kernel was not judged on', fallback: true },
  ], { title: `KernelEvolve: accept ${candidateId} for ${origin.name}` });
  if (!how) return false;
  const backend = (await loadSpec(run.view.specPath)).backend;
  const dtype = /dtype=torch\.(\w+)|astype\(np\.(\w+)\)/.exec(problemText);
  const plan = planOperatorAccept({
    moduleText: doc.getText(), moduleFile: origin.moduleFile, name: origin.name, candidate: c.source, backend, fallback: how.fallback,
    dtype: dtype?.[1] ?? dtype?.[2], inPackage: await fs.access(path.join(dir, '__init__.py')).then(() => true, () => false),
    provenance: `Written by KernelEvolve: candidate ${candidateId} of run ${run.runId}${c.verdict?.status === 'ok' ? `, ${candidateFigure(c)} the PyTorch code` : ''} (${path.basename(run.view.specPath)}).`,
  });
  if (!plan.ok) throw new UserFacingError(plan.reason);
  const kernelUri = vscode.Uri.file(path.join(dir, plan.kernelFileName));
  const edit = new vscode.WorkspaceEdit();
  edit.createFile(kernelUri, { overwrite: true });
  edit.insert(kernelUri, new vscode.Position(0, 0), plan.kernelText);
  edit.replace(moduleUri, new vscode.Range(doc.positionAt(plan.edit.start), doc.positionAt(plan.edit.end)), plan.edit.text);
  if (!(await vscode.workspace.applyEdit(edit))) throw new UserFacingError(`VS Code refused the edit to ${origin.moduleFile}.`);
  await doc.save();
  const kernelDoc = await vscode.workspace.openTextDocument(kernelUri);
  await kernelDoc.save();
  await vscode.window.showTextDocument(doc, { preview: false });
  void vscode.window.showInformationMessage(`KernelEvolve: ${origin.name} now calls ${plan.kernelFileName} (${candidateId}, ${candidateFigure(c)}). Undo (Ctrl+Z) in ${origin.moduleFile} reverts the call.`);
  return true;
}

/** Runs of a drafted problem: accept goes through acceptOperatorKernel, not the kernel splice. */
export function isOperatorRun(run: RunState): boolean {
  return run.view.kernel === MODEL_NEW;
}

async function guarded<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UserFacingError) void vscode.window.showWarningMessage(`KernelEvolve: ${e.message}`);
    else void vscode.window.showErrorMessage(`KernelEvolve: Write a kernel failed: ${(e as Error).message}`);
    return undefined;
  }
}

type Register = (id: string, fn: (...args: any[]) => unknown) => vscode.Disposable;

export function registerWriteKernel(
  ctx: WriteKernelContext,
  reg: Register = (id, fn) => vscode.commands.registerCommand(id, fn),
): vscode.Disposable[] {
  return [
    reg('kernelEvolve.writeKernel', (uri?: vscode.Uri, line?: number) => guarded(async () => {
      const settings = readSettings(uri ?? vscode.window.activeTextEditor?.document.uri);
      const missing = await llmMissing(settings, ctx.apiKey);
      const problem = await draftFor(uri, line);
      if (!problem) return undefined;
      if (missing) {
        void askLlmSetup(`Drafted ${path.basename(problem)} for review. ${missing}`);
        return problem;
      }
      void vscode.window.showInformationMessage(`KernelEvolve: drafted ${path.basename(problem)}: review its sizes and inputs, then evolve it.`, 'Evolve Now')
        .then((go) => (go === 'Evolve Now' ? guarded(() => evolveProblem(ctx, problem)) : undefined));
      return problem;
    })),
    reg('kernelEvolve.evolveProblem', (uri?: vscode.Uri) => guarded(async () => {
      const file = uri?.fsPath ?? vscode.window.activeTextEditor?.document.fileName;
      if (!file) throw new UserFacingError('Open a KernelBench-format problem file (class Model, get_inputs, get_init_inputs) first.');
      return evolveProblem(ctx, file);
    })),
  ];
}
