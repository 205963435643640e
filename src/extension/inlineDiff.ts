// The winner shown in the editor as an inline diff, as inline edit tools do it (Continue, Cline): the variant
// goes into the document as one edit (nothing is saved), each changed region is marked (added lines green,
// the lines it replaced on hover) with Accept / Reject CodeLenses and keys (gated by the context key
// kernelEvolve.inlineDiffVisible). Accepting a hunk only clears its marks; rejecting puts its old lines back.
// One Undo of the whole edit brings the file back as it was (and clean, since nothing was saved).
import * as vscode from 'vscode';
import { DisposableStore } from './disposables';
import { pendingHunks, type PendingHunk } from './acceptPlan';

export const INLINE_DIFF_CONTEXT = 'kernelEvolve.inlineDiffVisible';

interface Session {
  doc: vscode.TextDocument;
  hunks: PendingHunk[];
  /** e.g. `c0019 (2.61x confirmed)`. */
  label: string;
  language: string;
}

export class InlineDiffs implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly store = new DisposableStore();
  private readonly sessions = new Map<string, Session>();
  private readonly changed = this.store.add(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;
  private ownEdit = 0;
  private readonly added = this.store.add(vscode.window.createTextEditorDecorationType({
    isWholeLine: true, backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'), overviewRulerLane: vscode.OverviewRulerLane.Left,
  }));
  private readonly removed = this.store.add(vscode.window.createTextEditorDecorationType({
    isWholeLine: true, borderColor: new vscode.ThemeColor('diffEditor.removedTextBorder'), borderStyle: 'dashed none none none', borderWidth: '1px',
  }));

  constructor() {
    this.store.add(vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)));
    this.store.add(vscode.window.onDidChangeActiveTextEditor(() => this.refresh()));
    this.store.add(vscode.window.onDidChangeVisibleTextEditors(() => this.refresh()));
    this.store.add(vscode.workspace.onDidCloseTextDocument((d) => this.end(d.uri)));
  }

  has(uri: vscode.Uri): boolean {
    return this.sessions.has(uri.toString());
  }

  /** Applies the edits as one undoable edit and marks what changed; resolves with the number of hunks. */
  async start(doc: vscode.TextDocument, edits: { start: number; end: number; text: string }[], expected: string, label: string): Promise<number> {
    const current = doc.getText();
    const pending = pendingHunks(current, expected);
    const edit = new vscode.WorkspaceEdit();
    for (const e of edits) edit.replace(doc.uri, new vscode.Range(doc.positionAt(e.start), doc.positionAt(e.end)), e.text);
    this.ownEdit++;
    try {
      if (!(await vscode.workspace.applyEdit(edit))) return -1;
    } finally {
      this.ownEdit--;
    }
    if (pending.length) this.sessions.set(doc.uri.toString(), { doc, hunks: pending, label, language: doc.languageId });
    this.refresh();
    return pending.length;
  }

  /** The hunk under the cursor of the active editor, else the first one after it, else the first. */
  private hunkAtCursor(): { uri: vscode.Uri; index: number } | undefined {
    const editor = vscode.window.activeTextEditor;
    const s = editor && this.sessions.get(editor.document.uri.toString());
    if (!editor || !s) return undefined;
    const line = editor.selection.active.line;
    let index = s.hunks.findIndex((h) => line >= h.start && line < h.start + Math.max(1, h.newCount));
    if (index < 0) index = s.hunks.findIndex((h) => h.start >= line);
    return { uri: editor.document.uri, index: index < 0 ? 0 : index };
  }

  async accept(uri?: vscode.Uri, index?: number): Promise<void> {
    const at = uri && index !== undefined ? { uri, index } : this.hunkAtCursor();
    const s = at && this.sessions.get(at.uri.toString());
    if (!s || !s.hunks[at.index]) return;
    s.hunks.splice(at.index, 1);
    this.settle(s);
  }

  async reject(uri?: vscode.Uri, index?: number): Promise<void> {
    const at = uri && index !== undefined ? { uri, index } : this.hunkAtCursor();
    const s = at && this.sessions.get(at.uri.toString());
    const h = s?.hunks[at!.index];
    if (!s || !h) return;
    await this.restore(s, [h]);
    s.hunks.splice(s.hunks.indexOf(h), 1);
    this.settle(s);
  }

  async acceptAll(uri?: vscode.Uri): Promise<void> {
    const s = this.sessions.get((uri ?? vscode.window.activeTextEditor?.document.uri)?.toString() ?? '');
    if (!s) return;
    s.hunks = [];
    this.settle(s);
  }

  async rejectAll(uri?: vscode.Uri): Promise<void> {
    const s = this.sessions.get((uri ?? vscode.window.activeTextEditor?.document.uri)?.toString() ?? '');
    if (!s) return;
    await this.restore(s, s.hunks);
    s.hunks = [];
    this.settle(s);
  }

  /** Puts the old lines of the hunks back, as one edit. */
  private async restore(s: Session, which: PendingHunk[]): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    const doc = s.doc;
    for (const h of which) {
      const end = h.start + h.newCount;
      const old = h.oldLines.map((l) => l + '\n').join('');
      if (end < doc.lineCount) edit.replace(doc.uri, new vscode.Range(h.start, 0, end, 0), old);
      else edit.replace(doc.uri, new vscode.Range(Math.min(h.start, doc.lineCount - 1), h.start < doc.lineCount ? 0 : doc.lineAt(doc.lineCount - 1).text.length, doc.lineCount - 1, doc.lineAt(doc.lineCount - 1).text.length), (h.start >= doc.lineCount ? '\n' : '') + h.oldLines.join('\n'));
    }
    this.ownEdit++;
    try {
      await vscode.workspace.applyEdit(edit);
    } finally {
      this.ownEdit--;
    }
    // Later hunks moved by what each restored hunk changed.
    for (const h of which) {
      const delta = h.oldLines.length - h.newCount;
      for (const o of s.hunks) if (o.start > h.start) o.start += delta;
    }
  }

  private settle(s: Session): void {
    if (!s.hunks.length) this.sessions.delete(s.doc.uri.toString());
    this.refresh();
  }

  private end(uri: vscode.Uri): void {
    if (this.sessions.delete(uri.toString())) this.refresh();
  }

  /** The user's own edits move the hunks below them; one that touches a hunk (an Undo of the variant) ends the diff. */
  private onChange(e: vscode.TextDocumentChangeEvent): void {
    const s = this.sessions.get(e.document.uri.toString());
    if (!s || this.ownEdit || !e.contentChanges.length) return;
    for (const c of e.contentChanges) {
      const delta = (c.text.match(/\n/g)?.length ?? 0) - (c.range.end.line - c.range.start.line);
      for (const h of s.hunks) {
        const last = h.start + Math.max(1, h.newCount) - 1;
        if (c.range.end.line < h.start) h.start += delta;
        else if (c.range.start.line <= last) { this.end(e.document.uri); return; }
      }
    }
    this.refresh();
  }

  private refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const s = this.sessions.get(editor.document.uri.toString());
      editor.setDecorations(this.added, s ? s.hunks.filter((h) => h.newCount).map((h) => new vscode.Range(h.start, 0, h.start + h.newCount - 1, 0)) : []);
      editor.setDecorations(this.removed, s ? s.hunks.filter((h) => h.oldLines.length).map((h) => ({
        range: new vscode.Range(h.start, 0, h.start, 0),
        hoverMessage: new vscode.MarkdownString().appendText(`Replaces ${h.oldLines.length} line(s):`).appendCodeblock(h.oldLines.join('\n'), s.language),
        renderOptions: { after: { contentText: `  − ${h.oldLines.length} line(s) replaced (hover)`, color: new vscode.ThemeColor('editorCodeLens.foreground') } },
      })) : []);
    }
    const active = vscode.window.activeTextEditor;
    void vscode.commands.executeCommand('setContext', INLINE_DIFF_CONTEXT, !!active && this.sessions.has(active.document.uri.toString()));
    this.changed.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const s = this.sessions.get(doc.uri.toString());
    if (!s) return [];
    const lenses: vscode.CodeLens[] = [];
    s.hunks.forEach((h, i) => {
      const range = new vscode.Range(Math.min(h.start, doc.lineCount - 1), 0, Math.min(h.start, doc.lineCount - 1), 0);
      if (i === 0) {
        lenses.push(
          new vscode.CodeLens(range, { title: `KernelEvolve ${s.label}: Accept All`, command: 'kernelEvolve.acceptAllHunks', arguments: [doc.uri] }),
          new vscode.CodeLens(range, { title: 'Reject All', command: 'kernelEvolve.rejectAllHunks', arguments: [doc.uri] }),
        );
      }
      lenses.push(
        new vscode.CodeLens(range, { title: 'Accept (Ctrl+Shift+Y)', command: 'kernelEvolve.acceptHunk', arguments: [doc.uri, i] }),
        new vscode.CodeLens(range, { title: 'Reject (Ctrl+Shift+N)', command: 'kernelEvolve.rejectHunk', arguments: [doc.uri, i] }),
      );
    });
    return lenses;
  }

  dispose(): void {
    this.sessions.clear();
    void vscode.commands.executeCommand('setContext', INLINE_DIFF_CONTEXT, false);
    this.store.dispose();
  }
}
