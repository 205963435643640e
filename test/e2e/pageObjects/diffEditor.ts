// VS Code's diff editor, as opened by Preview.
import type { Page } from 'playwright-core';

export class DiffEditor {
  constructor(readonly page: Page) {}

  async waitOpen(timeoutMs = 30_000): Promise<void> {
    await this.page.locator('.monaco-diff-editor').first().waitFor({ timeout: timeoutMs });
  }

  /** Lines VS Code marks as inserted on the right side. */
  async insertedLineCount(): Promise<number> {
    return this.page.locator('.monaco-diff-editor .editor.modified .line-insert, .monaco-diff-editor .editor.modified .char-insert').count();
  }

  async isReadOnlyCandidate(): Promise<boolean> {
    const tab = await this.page.locator('.tabs-container .tab.active').getAttribute('aria-label');
    return !!tab && /↔/.test(tab);
  }
}
