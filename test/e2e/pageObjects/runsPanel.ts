// The KernelEvolve side panel (a webview: nested iframes, found through page.frames()).
import type { Frame, Page } from 'playwright-core';

export interface CandidateRowView {
  id: string;
  status: string;
  cells: string[];
  /** The row's hover text: the verdict's reason, or why it was not judged. */
  title: string;
}

export class RunsPanel {
  constructor(readonly page: Page) {}

  /** The webview frame holding the panel, once it has rendered. */
  async frame(timeoutMs = 60_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const f of this.page.frames()) {
        try {
          if (await f.locator('[data-testid="candidate-table"]').count()) return f;
        } catch {
          // a frame that went away while we looked
        }
      }
      await this.page.waitForTimeout(250);
    }
    throw new Error('The KernelEvolve panel did not appear.');
  }

  /** Shows the panel from its activity-bar icon unless it is already on screen. */
  async open(): Promise<void> {
    // The icon toggles the side bar: click it only when the panel is not already the one showing. After a window
    // reload two things were seen to leave the panel blank: the workbench restoring the panel just after the check
    // (the click then hides it), and VS Code's "Error loading webview" (its service worker, not the extension). So
    // while it does not render: look again, then hide and show it (a new webview), then reload the window once.
    const icon = this.page.locator('.activitybar .action-item a[aria-label^="KernelEvolve"]').first();
    for (let attempt = 0; ; attempt++) {
      const sidebarTitle = this.page.locator('.part.sidebar:visible .title-label');
      const showing = (await sidebarTitle.count()) > 0 && /KernelEvolve/i.test(await sidebarTitle.first().innerText());
      if (!showing) await icon.click();
      else if (attempt === 2) {
        await icon.click();
        await this.page.waitForTimeout(500);
        await icon.click();
      } else if (attempt === 3) {
        await this.page.reload();
        await this.page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
        continue;
      }
      try {
        await this.frame(attempt < 4 ? 30_000 : 60_000);
        return;
      } catch (e) {
        if (attempt >= 4) throw e;
      }
    }
  }

  async rows(): Promise<CandidateRowView[]> {
    const f = await this.frame();
    return f.locator('[data-testid="candidate-row"]').evaluateAll((els) => els.map((e) => ({
      id: (e as HTMLElement).dataset.id ?? '',
      status: (e as HTMLElement).dataset.status ?? '',
      cells: Array.from(e.children).map((c) => c.textContent ?? ''),
      title: (e as HTMLElement).title,
    })));
  }

  /** Waits until the table shows at least n candidates that have been judged. */
  async waitForJudged(n: number, timeoutMs = 300_000): Promise<CandidateRowView[]> {
    const deadline = Date.now() + timeoutMs;
    let last: CandidateRowView[] = [];
    while (Date.now() < deadline) {
      last = await this.rows();
      const judged = last.filter((r) => !['proposed', 'queued', 'evaluating'].includes(r.status));
      if (judged.length >= n) return last;
      await this.page.waitForTimeout(500);
    }
    throw new Error(`Only ${last.length} candidate rows appeared: ${JSON.stringify(last)}`);
  }

  /** The rows of "Winners by hardware": the hardware as shown, and the winner's figure. */
  async hardwareWinners(): Promise<{ hardware: string; speedup: string }[]> {
    const f = await this.frame();
    return f.locator('[data-testid="hardware-winner"]').evaluateAll((els) => els.map((e) => ({
      hardware: e.children[0]?.textContent ?? '',
      speedup: e.children[1]?.textContent ?? '',
    })));
  }

  async runStatus(): Promise<string> {
    return (await this.frame()).locator('[data-testid="run-status"]').innerText();
  }

  async waitForRunStatus(status: RegExp, timeoutMs = 300_000): Promise<string> {
    const f = await this.frame();
    await f.locator('[data-testid="run-status"]', { hasText: status }).waitFor({ timeout: timeoutMs });
    return f.locator('[data-testid="run-status"]').innerText();
  }

  async bestSpeedup(): Promise<string> {
    return (await this.frame()).locator('[data-testid="best-speedup"]').innerText();
  }

  async chartPointCount(): Promise<number> {
    return (await this.frame()).locator('[data-testid="speedup-chart"] circle').count();
  }

  /** Selects a candidate in the table and waits for its details. */
  async selectCandidate(id: string): Promise<Frame> {
    const f = await this.frame();
    await f.locator(`[data-testid="candidate-row"][data-id="${id}"]`).click();
    await f.locator(`[data-testid="candidate-details"][data-id="${id}"]`).waitFor({ timeout: 30_000 });
    return f;
  }

  /** The selected candidate's status badge and verdict text, as its details show them. */
  async details(): Promise<{ status: string; verdict: string }> {
    const f = await this.frame();
    const d = f.locator('[data-testid="candidate-details"]');
    return { status: (await d.locator('vscode-badge').first().innerText()).trim(), verdict: await f.locator('[data-testid="verdict"]').innerText() };
  }

  async showBest(): Promise<string> {
    const f = await this.frame();
    await f.locator('[data-testid="select-best"]').click();
    const details = f.locator('[data-testid="candidate-details"]');
    await details.waitFor({ timeout: 30_000 });
    return (await details.getAttribute('data-id')) ?? '';
  }

  async diffText(): Promise<{ added: string[]; removed: string[]; coloured: number }> {
    const f = await this.frame();
    return f.locator('[data-testid="candidate-diff"]').evaluate((pre) => ({
      added: Array.from(pre.querySelectorAll('.diff-line.add')).map((l) => Array.from(l.children).slice(3).map((s) => s.textContent).join('')),
      removed: Array.from(pre.querySelectorAll('.diff-line.del')).map((l) => Array.from(l.children).slice(3).map((s) => s.textContent).join('')),
      coloured: Array.from(pre.querySelectorAll('span')).filter((s) => getComputedStyle(s).getPropertyValue('--td')).length,
    }));
  }

  async clickDetailButton(testid: 'preview-candidate' | 'accept-candidate' | 'profile-report'): Promise<void> {
    await (await this.frame()).locator(`[data-testid="${testid}"]`).click();
  }

  /** A screenshot of the side bar that holds the panel. */
  async screenshot(file: string): Promise<void> {
    await this.page.locator('.part.sidebar').screenshot({ path: file });
  }
}
