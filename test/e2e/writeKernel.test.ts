// "Write a kernel for this" as a user meets it in a real VS Code (code-server in headless Chromium): on a numpy
// operator with no LLM set, the problem is drafted for review and a notification says what is needed and where
// to set it, with a button that opens those settings; with the scripted OpenAI-compatible server typed in as the
// endpoint there, the problem's lens evolves it on the local host (the real harness builds and judges the C++
// ModelNew), the lens offers the kernel with its figure, Accept writes the kernel file next to the module and makes
// the function call it, and Undo takes the call out.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALED_RELU_KERNEL, scaledReluModule } from '../support/scaledReluOperator';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';
import { CodeServer, OUTPUT } from './codeServer';
import { KernelEditor } from './pageObjects/kernelEditor';
import { Workbench } from './pageObjects/workbench';

// Sizes at which one fused C++ pass clearly beats numpy's two passes and temporaries, so the kernel is offered.
const MODULE = scaledReluModule(512, 2048);

const KERNEL = SCALED_RELU_KERNEL;

const ws = mkdtempSync(path.join(tmpdir(), 'ke-e2e-ws-'));
mkdirSync(path.join(ws, 'ops'));
writeFileSync(path.join(ws, 'ops', 'mylib.py'), MODULE);
const python = process.env.KERNELEVOLVE_PYTHON || 'python3';
const llm = new ScriptedLlmServer([{ kind: 'answer', content: `Rationale: one fused loop.\n\n\`\`\`python\n${KERNEL}\`\`\`\n` }],
  { fallback: { kind: 'answer', content: 'Nothing better.' } });
const server = new CodeServer({
  workspace: ws,
  settings: { 'kernelEvolve.hosts': [{ name: 'local', type: 'local', python }], 'kernelEvolve.operators': ['llm'], 'kernelEvolve.budget.candidates': 2 },
});
let wb: Workbench;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  await llm.start();
  wb = new Workbench(await server.start());
});

afterAll(async () => {
  await server.page?.screenshot({ path: path.join(OUTPUT, 'write-kernel-last.png') }).catch(() => undefined);
  await server.stop();
  await llm.stop();
});

describe('Write a kernel for a numpy operator, in code-server', () => {
  it('without an LLM, drafts the problem for review and says what is needed and where to set it', async () => {
    const editor = await wb.openFile('ops/mylib.py');
    await editor.waitForCodeLens(/Write a kernel for/, 120_000);
    // one lens, naming the function it is for (not demo, which only makes random inputs)
    // (read until the lenses settle: the editor redraws them as the file's analysis comes in, and a read between two
    // draws found none once in CI)
    await expect.poll(async () => (await editor.codeLenses()).filter((t) => /Write a kernel/.test(t)), { timeout: 30_000 })
      .toEqual(['KernelEvolve: Write a kernel for scaled_relu']);
    await editor.clickCodeLens(/Write a kernel for scaled_relu/);
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

  it('with the endpoint set, evolves the problem from its lens; Accept writes the kernel file and makes the function call it; Undo takes the call out', async () => {
    // Typed into the settings editor that the notification's button opened above, as a user does.
    const setting = (label: string) => server.page.locator('.settings-editor .setting-item-contents', { has: server.page.locator('.setting-item-label', { hasText: new RegExp(`^${label}$`) }) }).first();
    const settingsFile = path.join(server.userDataDir, 'User', 'settings.json');
    // one at a time: the editor writes each after a pause in typing
    await setting('Base URL').locator('input').fill(llm.baseURL);
    await expect.poll(() => readFileSync(settingsFile, 'utf8'), { timeout: 30_000 }).toContain(`"kernelEvolve.llm.baseURL": "${llm.baseURL}"`);
    await setting('Model').locator('input').fill('scripted');
    await expect.poll(() => readFileSync(settingsFile, 'utf8'), { timeout: 30_000 }).toContain('"kernelEvolve.llm.model": "scripted"');
    // The settings open as a modal editor over the window: closed with Escape.
    const modal = server.page.locator('.monaco-modal-editor-block');
    for (let i = 0; i < 5 && await modal.isVisible(); i++) {
      await server.page.keyboard.press('Escape');
      await server.page.waitForTimeout(500);
    }
    await server.page.locator('.tabs-container .tab', { hasText: 'mylib_scaled_relu_problem.py' }).first().click();
    const problem = new KernelEditor(server.page, 'mylib_scaled_relu_problem.py');
    await problem.waitForCodeLens(/Write a kernel \(evolve this problem\)/, 60_000);
    await problem.clickCodeLens(/Write a kernel \(evolve this problem\)/);
    const runs = path.join(ws, '.kernelevolve', 'runs');
    for (let i = 0; i < 60 && !existsSync(runs); i++) await server.page.waitForTimeout(1000);
    expect(existsSync(runs), `no run started; notifications: ${(await wb.notifications()).join(' | ')}`).toBe(true);
    // The run drafts one C++ ModelNew, judges it against numpy and judges the leader once more.
    await problem.waitForCodeLens(/kernel c\d+ — Preview/, 300_000);
    const lens = (await problem.codeLenses()).find((t) => /kernel c\d+ — Preview/.test(t))!;
    const [, figure, id] = /(\d+\.\d\dx(?: \(\d+\.\d\d-\d+\.\d\d\))?(?: confirmed)?) kernel (c\d+) — Preview/.exec(lens) ?? [];
    expect(figure, lens).toBeDefined();
    expect(llm.requests.length).toBeGreaterThanOrEqual(1);

    await problem.clickCodeLens(/^Accept$/);
    const pick = await wb.quickPick();
    expect(pick.title).toBe(`KernelEvolve: accept ${id} for scaled_relu`);
    expect(pick.items).toEqual(['Call the kernel', 'Call the kernel, keep the original as fallback']);
    await server.page.keyboard.press('Enter');
    const note = await wb.waitForNotification(/now calls mylib_scaled_relu_kernel\.py/, 60_000);
    expect(note).toContain(`(${id}, ${figure})`);
    const kernelFile = path.join(ws, 'ops', 'mylib_scaled_relu_kernel.py');
    expect(readFileSync(kernelFile, 'utf8')).toMatch(/def scaled_relu_kernel\(x, w\):/);
    const module = readFileSync(path.join(ws, 'ops', 'mylib.py'), 'utf8');
    expect(module).toContain('from mylib_scaled_relu_kernel import scaled_relu_kernel');
    expect(module).toMatch(/ {4}return scaled_relu_kernel\(x, w\)/);
    // The module as written computes through the kernel, and right.
    const check = spawnSync(python, ['-c', [
      'import numpy as np, mylib',
      'x = np.random.randn(37, 101).astype(np.float32); w = np.random.rand(101).astype(np.float32)',
      'assert np.allclose(mylib.scaled_relu(x, w), np.maximum(x, 0) * w, rtol=1e-6, atol=1e-6)',
      'print("ok")',
    ].join('\n')], { cwd: path.join(ws, 'ops'), encoding: 'utf8' });
    expect(check.stdout.trim(), check.stderr).toBe('ok');

    // The module's tab is shown; one Undo there takes the call out (VS Code may ask whether to undo in every file).
    await server.page.locator('.tabs-container .tab.active', { hasText: 'mylib.py' }).waitFor({ timeout: 30_000 });
    await server.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await server.page.keyboard.press('Control+Z');
    const dialog = server.page.locator('.monaco-dialog-box');
    if (await dialog.waitFor({ timeout: 5000 }).then(() => true, () => false)) {
      await dialog.locator('.monaco-button', { hasText: /^Undo/ }).first().click();
    }
    await expect.poll(() => wb.visibleEditorText(), { timeout: 30_000 }).toContain('return np.maximum(x, 0) * w');
    expect(await wb.visibleEditorText()).not.toContain('scaled_relu_kernel');
  });
});
