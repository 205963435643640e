// The editor showing a kernel's source: the cursor, the CodeLenses over kernels, the text.
import type { Page } from 'playwright-core';

export class KernelEditor {
  constructor(readonly page: Page, readonly fileName: string) {}

  private get editor() {
    return this.page.locator('.editor-group-container.active .monaco-editor').first();
  }

  /** Puts the cursor on a line (1-based) through Quick Open's `:line` (the browser keeps Ctrl+G). A file just
   *  opened can take the focus back while Quick Open shows, which closes it (once in a CI run, on 2026-12-04):
   *  then it is opened again, three tries in all. */
  async goToLine(line: number): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible' });
      try {
        await input.fill(`:${line}`, { timeout: 5_000 });
        break;
      } catch (e) {
        if (attempt === 3) throw e;
        await this.page.keyboard.press('Escape');
      }
    }
    await this.page.waitForTimeout(200);
    await input.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
    const status = this.page.locator('.statusbar-item', { hasText: new RegExp(`^Ln ${line}, Col`) });
    await status.first().waitFor({ timeout: 10_000 });
  }

  /** The CodeLens links above the kernels, as shown (an icon before a title adds no text). */
  async codeLenses(): Promise<string[]> {
    return (await this.editor.locator('.codelens-decoration a').allInnerTexts()).map((t) => t.trim());
  }

  async waitForCodeLens(text: RegExp, timeoutMs = 60_000): Promise<void> {
    await this.editor.locator('.codelens-decoration a', { hasText: text }).first().waitFor({ timeout: timeoutMs });
  }

  async clickCodeLens(text: RegExp): Promise<void> {
    await this.editor.locator('.codelens-decoration a', { hasText: text }).first().click();
  }
}
