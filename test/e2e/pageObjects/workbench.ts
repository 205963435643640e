// The VS Code window: the command palette, quick open, notifications.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { KernelEditor } from './kernelEditor';

export class Workbench {
  constructor(readonly page: Page) {}

  /** Runs a command by its title from the command palette, as a user types it. */
  async runCommand(title: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    const item = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    // A second try: right after a reload the palette can open before the extensions' commands are listed.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('F1');
      await input.waitFor({ state: 'visible' });
      await input.fill(`>${title}`);
      try {
        await item.waitFor({ state: 'visible', timeout: 20_000 });
        break;
      } catch (e) {
        await this.page.keyboard.press('Escape');
        if (attempt === 2) throw e;
      }
    }
    await input.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
  }

  /** Opens a workspace file through Quick Open (Ctrl+P). The first file search of a window can take minutes on a
   *  busy machine (it waits for the extension host): Quick Open is asked again until the file is listed. */
  async openFile(relativePath: string, timeoutMs = 300_000): Promise<KernelEditor> {
    const parts = relativePath.split('/');
    const name = parts.pop()!;
    // The row of the workspace file (its folder is in the description), not a recently opened virtual
    // document of the same name such as a candidate preview.
    let row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name });
    if (parts.length) row = row.filter({ hasText: parts.join('/') });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.quickOpen(relativePath);
      try {
        await row.first().waitFor({ timeout: 30_000 });
        break;
      } catch (e) {
        await this.page.keyboard.press('Escape');
        if (Date.now() > deadline) throw e;
      }
    }
    // The file's own tab, active: the list can re-sort under the click (a run's candidates/c0000.cpp also
    // matches "kernels/matmul.cpp" loosely), so a wrong file opened is noticed and the file asked for again.
    const active = this.page.locator(`.tabs-container .tab.active .monaco-icon-label[aria-label$="/${relativePath}"]`);
    // its tab, open but not the active one (another editor took the focus as it opened): a click makes it active
    const tab = this.page.locator(`.tabs-container .tab:not(.active)`, { has: this.page.locator(`.monaco-icon-label[aria-label$="/${relativePath}"]`) });
    for (let attempt = 1; ; attempt++) {
      await row.first().click();
      try {
        await active.first().waitFor({ timeout: 15_000 });
        return new KernelEditor(this.page, name);
      } catch (e) {
        // Quick Open can still be up (the click on its row did not take on a busy machine): it covers the tabs,
        // and a click on one waits behind it for the click's whole timeout
        await this.closeQuickOpen();
        if (await tab.count()) {
          await tab.first().click({ timeout: 10_000 }).catch(() => undefined);
          if (await active.first().waitFor({ timeout: 10_000 }).then(() => true, () => false)) return new KernelEditor(this.page, name);
        }
        if (attempt === 4) {
          const tabs = await this.page.locator('.tabs-container .tab.active .monaco-icon-label').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
          throw new Error(`${relativePath} did not become the active editor in ${attempt} tries (active tabs: ${JSON.stringify(tabs)}): ${String(e)}`);
        }
        await this.page.keyboard.press('Escape');
        await this.quickOpen(relativePath);
        await row.first().waitFor({ timeout: 30_000 });
      }
    }
  }

  /** Closes Quick Open where it is shown. */
  private async closeQuickOpen(): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    if (!(await widget.isVisible())) return;
    await this.page.keyboard.press('Escape');
    await widget.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
  }

  /** Quick Open (Ctrl+P) with TEXT typed in. On a busy machine a file that finishes opening late takes the focus
   *  and closes Quick Open under the typing: it is opened again until the text is in. */
  private async quickOpen(text: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Control+P');
      try {
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill(text, { timeout: 10_000 });
        return;
      } catch (e) {
        if (attempt === 5) throw e;
        await this.page.keyboard.press('Escape');
      }
    }
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

  /** The buttons of the notification whose message matches. */
  async notificationButtons(text: RegExp): Promise<string[]> {
    const toast = this.page.locator('.notification-toast', { has: this.page.locator('.notification-list-item-message', { hasText: text }) }).first();
    return toast.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts();
  }

  async clickNotificationButton(text: RegExp, button: string): Promise<void> {
    const toast = this.page.locator('.notification-toast', { has: this.page.locator('.notification-list-item-message', { hasText: text }) }).first();
    await toast.locator('.notification-list-item-buttons-container .monaco-button', { hasText: button }).first().click();
  }

  /** The title and the items of the quick pick on screen. */
  async quickPick(timeoutMs = 30_000): Promise<{ title: string; items: string[] }> {
    const widget = this.page.locator('.quick-input-widget');
    await widget.waitFor({ state: 'visible', timeout: timeoutMs });
    await this.page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: timeoutMs });
    return {
      title: await widget.locator('.quick-input-title').innerText().catch(() => ''),
      items: await this.page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts(),
    };
  }

  /** The lines of the active editor that are on screen, top to bottom. */
  async visibleEditorText(): Promise<string> {
    return this.page.evaluate(() => {
      const lines = Array.from(document.querySelectorAll<HTMLElement>('.editor-group-container.active .monaco-editor .view-lines .view-line'));
      return lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)).map((l) => l.innerText.replace(/\u00a0/g, ' ')).join('\n');
    });
  }

  async dismissNotifications(): Promise<void> {
    // The clear button shows on hover only; a toast that is already gone needs nothing.
    for (const toast of await this.page.locator('.notification-toast').all()) {
      await toast.hover({ timeout: 1000 }).catch(() => undefined);
      await toast.locator('.codicon-notifications-clear').click({ timeout: 1000 }).catch(() => undefined);
    }
  }

  /** Drags the side bar's edge to make it wider (the panel's table and diff read better). */
  async widenSideBar(by: number): Promise<void> {
    const box = await this.page.locator('.part.sidebar').boundingBox();
    if (!box) return;
    const x = box.x + box.width + 1;
    const y = box.y + box.height / 2;
    await this.page.mouse.move(x, y);
    await this.page.waitForTimeout(300); // the sash shows on hover
    await this.page.mouse.down();
    await this.page.mouse.move(x + by / 2, y, { steps: 5 });
    await this.page.mouse.move(x + by, y, { steps: 5 });
    await this.page.mouse.up();
  }

  /** Replaces the User settings as a user does it: Open User Settings (JSON) (VS Code opens it over the window, in
   *  a modal editor), the whole text replaced, saved, the modal closed. The editor applies its own save at once; a
   *  file written from outside is not noticed in time, if at all. */
  async editUserSettings(settingsFile: string, settings: Record<string, unknown>): Promise<void> {
    await this.runCommand('Preferences: Open User Settings (JSON)');
    const modal = this.page.locator('.modal-editor-part');
    const editor = modal.locator('.monaco-editor', { has: this.page.locator('.view-lines', { hasText: '"kernelEvolve.hosts"' }) }).first();
    await editor.waitFor({ timeout: 30_000 });
    // Pasted, as one edit: typed, the editor would add closing quotes and brackets of its own.
    await this.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await this.page.evaluate((text) => navigator.clipboard.writeText(text), JSON.stringify(settings, null, 2));
    await editor.locator('.view-lines').click();
    await this.page.keyboard.press('Control+A');
    await this.page.keyboard.press('Control+V');
    await this.page.keyboard.press('Control+S');
    const deadline = Date.now() + 30_000;
    // VS Code may rewrite a value of its own on save (a renamed colour theme): the settings written must be there.
    const saved = () => {
      try {
        const now = JSON.parse(readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
        return Object.entries(settings).every(([k, v]) => k.startsWith('workbench.') || JSON.stringify(now[k]) === JSON.stringify(v));
      } catch {
        return false; // being written
      }
    };
    while (!saved() && Date.now() < deadline) await this.page.waitForTimeout(250);
    if (!saved()) throw new Error(`The User settings were not saved as written: ${readFileSync(settingsFile, 'utf8')}`);
    // VS Code may edit the open settings itself after the save (it renames an old colour theme's id), leaving them
    // unsaved: closing then asks whether to save them, and they are saved.
    const ask = this.page.locator('.monaco-dialog-box', { hasText: 'Do you want to save the changes' });
    const closeBy = Date.now() + 30_000;
    while (await modal.isVisible() && Date.now() < closeBy) {
      if (await ask.isVisible()) await ask.locator('.monaco-button', { hasText: /^Save$/ }).click();
      else await this.page.keyboard.press('Escape');
      await modal.waitFor({ state: 'hidden', timeout: 2000 }).catch(() => undefined);
    }
    if (await modal.isVisible()) throw new Error('The User settings editor did not close.');
  }

  /** The titles of the open editor tabs, whole: VS Code shows a file's extension apart, as the label's suffix. */
  async tabTitles(): Promise<string[]> {
    return this.page.locator('.tabs-container .tab .monaco-icon-label-container').evaluateAll((labels) => labels.map((l) =>
      `${l.querySelector('.label-name')?.textContent ?? ''}${l.querySelector('.label-suffix')?.textContent ?? ''}`));
  }
}
