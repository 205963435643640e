// The activated extension's API, for the suites.
import * as vscode from 'vscode';
import type { KernelEvolveApi } from '../../src/extension/extension';

export async function kernelEvolve(): Promise<KernelEvolveApi> {
  const ext = vscode.extensions.getExtension<KernelEvolveApi>('kernelevolve.kernelevolve');
  if (!ext) throw new Error('The KernelEvolve extension is not installed in this VS Code.');
  return ext.isActive ? ext.exports : ext.activate();
}

export function workspaceDir(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  if (!f) throw new Error('The suites need a workspace folder.');
  return f.uri.fsPath;
}

export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Timed out waiting for ${what}.`);
}
