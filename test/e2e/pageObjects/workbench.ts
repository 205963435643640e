// The VS Code window: the command palette, quick open, notifications.
import type { Page } from 'playwright-core';
import { KernelEditor } from './kernelEditor';

export class Workbench {
  constructor(readonly page: Page) {}

  /** Runs a command by its title from the command palette, as a user types it. */
  async runCommand(title: string): Promise<void> {
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    const item = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await item.waitFor({ state: 'visible', timeout: 30_000 });
    await input.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
  }

  /** Opens a workspace file through Quick Open (Ctrl+P). */
  async openFile(relativePath: string): Promise<KernelEditor> {
    await this.page.keyboard.press('Control+P');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(relativePath);
    const name = relativePath.split('/').pop()!;
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 30_000 });
    await input.press('Enter');
    const tab = this.page.locator('.tabs-container .tab', { hasText: name });
    await tab.first().waitFor({ timeout: 30_000 });
    return new KernelEditor(this.page, name);
  }

  /** Text of the notification toasts on screen. */
  async notifications(): Promise<string[]> {
    return this.page.locator('.notification-toast .notification-list-item-message').allInnerTexts();
  }

  async waitForNotification(text: RegExp, timeoutMs = 60_000): Promise<string> {
    const toast = this.page.locator('.notification-toast .notification-list-item-message', { hasText: text }).first();
    await toast.waitFor({ timeout: timeoutMs });
    return toast.innerText();
  }

  async dismissNotifications(): Promise<void> {
    for (const b of await this.page.locator('.notification-toast .codicon-notifications-clear').all()) await b.click().catch(() => undefined);
  }

  /** The titles of the open editor tabs. */
  async tabTitles(): Promise<string[]> {
    return this.page.locator('.tabs-container .tab .label-name').allInnerTexts();
  }
}
