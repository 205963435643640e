// Profile reports as read-only markdown documents in editor tabs (`kernelevolve-report:/<key>/<title>.md`).
import * as vscode from 'vscode';

export const REPORT_SCHEME = 'kernelevolve-report';

export class ReportDocuments implements vscode.TextDocumentContentProvider {
  private readonly reports = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  async open(key: string, title: string, markdown: string): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${key}/${title.replace(/[^\w.-]+/g, '_')}.md` });
    this.reports.set(uri.path, markdown);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.reports.get(uri.path) ?? '# Report no longer available\n\nRun the profile command again.\n';
  }
}
