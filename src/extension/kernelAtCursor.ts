// The kernel the user points at: the editor's cursor (or a CodeLens's position) inside a kernel's
// definition. Anything else is a message saying what counts as a kernel and which ones the file has.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { grammarFor, KernelLocator, type GrammarName, type KernelSite } from '../engine/kernelLocator';

export interface KernelTarget {
  document: vscode.TextDocument;
  grammar: GrammarName;
  site: KernelSite;
}

export class UserFacingError extends Error {}

export async function kernelAtCursor(uri?: vscode.Uri, line?: number, character?: number): Promise<KernelTarget> {
  const editor = vscode.window.activeTextEditor;
  const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : editor?.document;
  if (!document) throw new UserFacingError('Open a kernel source file (Python with Triton, CUDA or C++) and put the cursor inside a kernel.');
  const grammar = grammarFor(document.languageId) ?? grammarFor(document.fileName);
  if (!grammar) {
    throw new UserFacingError(`${path.basename(document.fileName)} is not a Python, CUDA or C++ file; KernelEvolve evolves @triton.jit, __global__ and extern "C" functions.`);
  }
  const position = uri instanceof vscode.Uri && line !== undefined ? new vscode.Position(line, character ?? 0)
    : editor && editor.document === document ? editor.selection.active : new vscode.Position(0, 0);
  const locator = await KernelLocator.get();
  const text = document.getText();
  const site = locator.at(text, grammar, document.offsetAt(position));
  if (!site) {
    const all = locator.find(text, grammar).map((k) => k.name);
    const what = grammar === 'python' ? 'a @triton.jit function' : 'a CUDA __global__ function or an extern "C" function';
    throw new UserFacingError(`The cursor is not inside a kernel. Put it inside ${what}${all.length ? `; this file has: ${all.join(', ')}` : '; this file has none'}.`);
  }
  return { document, grammar, site };
}
