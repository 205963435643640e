// "Write a kernel for this" as a user meets it in a real VS Code (code-server in headless Chromium): on a numpy
// operator with no LLM set, the problem is drafted for review and a notification says what is needed and where
// to set it, with a button that opens those settings.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeServer, OUTPUT } from './codeServer';
import { Workbench } from './pageObjects/workbench';

const MODULE = `import numpy as np


def scaled_relu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ReLU, then a scale per column."""
    return np.maximum(x, 0) * w


def demo():
    x = np.random.randn(512, 2048).astype(np.float32)
    w = np.random.rand(2048).astype(np.float32)
    return scaled_relu(x, w)
`;

const ws = mkdtempSync(path.join(tmpdir(), 'ke-e2e-ws-'));
mkdirSync(path.join(ws, 'ops'));
writeFileSync(path.join(ws, 'ops', 'mylib.py'), MODULE);
const server = new CodeServer({ workspace: ws });
let wb: Workbench;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  wb = new Workbench(await server.start());
});

afterAll(async () => {
  await server.page?.screenshot({ path: path.join(OUTPUT, 'write-kernel-last.png') }).catch(() => undefined);
  await server.stop();
});

describe('Write a kernel for a numpy operator, in code-server', () => {
  it('without an LLM, drafts the problem for review and says what is needed and where to set it', async () => {
    const editor = await wb.openFile('ops/mylib.py');
    await editor.waitForCodeLens(/Write a kernel for this/, 120_000);
    await editor.clickCodeLens(/Write a kernel for this/);
    const msg = await wb.waitForNotification(/OpenAI-compatible endpoint/, 60_000);
    expect(msg).toMatch(/^KernelEvolve: Drafted mylib_scaled_relu_problem\.py for review\./);
    expect(msg).toContain('this workspace has no model (the setting kernelEvolve.llm.model) and no endpoint (kernelEvolve.llm.baseURL');
    expect(await wb.notificationButtons(/OpenAI-compatible endpoint/)).toEqual(['Open Settings', 'Set API Key']);
    await server.page.locator('.tabs-container .tab', { hasText: 'mylib_scaled_relu_problem.py' }).first().waitFor({ timeout: 30_000 });
    expect(readFileSync(path.join(ws, 'ops', 'mylib_scaled_relu_problem.py'), 'utf8')).toContain('SHAPES = [{"n1": 512, "n2": 2048}, {"n1": 511, "n2": 2047}]');
    expect(existsSync(path.join(ws, '.kernelevolve', 'runs')), 'no run without an LLM').toBe(false);
    await wb.clickNotificationButton(/OpenAI-compatible endpoint/, 'Open Settings');
    const titles = server.page.locator('.settings-editor .setting-item-contents .setting-item-title');
    await titles.filter({ hasText: /Base URL/i }).first().waitFor({ timeout: 60_000 });
    expect((await titles.allInnerTexts()).join(' | ')).toMatch(/Model/);
    await wb.dismissNotifications();
  });
});
