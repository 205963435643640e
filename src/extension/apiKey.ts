// The LLM API key lives only in SecretStorage (never in settings, never in the run store).
import * as vscode from 'vscode';

const KEY = 'kernelEvolve.llm.apiKey';

export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(KEY);
  }

  async promptAndStore(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: 'KernelEvolve: Set API Key',
      prompt: 'The key for the LLM endpoint in kernelEvolve.llm.baseURL (kept in VS Code\'s secret storage). Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    if (value.trim()) await this.secrets.store(KEY, value.trim());
    else await this.secrets.delete(KEY);
    void vscode.window.showInformationMessage(value.trim() ? 'KernelEvolve: API key saved in secret storage.' : 'KernelEvolve: API key removed.');
    return true;
  }
}
