/// <reference types="mocha" />
// The panel is a webview without retained context: each time it is shown again its page reloads and says
// `ready`, and the host replays the state.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { kernelEvolve, until } from './extensionApi';

suite('Side panel', () => {
  test('says ready when shown, and again after being hidden and shown', async () => {
    const api = await kernelEvolve();
    await vscode.commands.executeCommand('kernelEvolve.showPanel');
    await until('the first ready', () => api.panel.readyCount >= 1, 60_000);
    const first = api.panel.readyCount;
    await vscode.commands.executeCommand('workbench.view.explorer');
    await new Promise((r) => setTimeout(r, 500));
    await vscode.commands.executeCommand('kernelEvolve.showPanel');
    await until('ready after re-show', () => api.panel.readyCount > first, 60_000);
    assert.ok(api.panel.readyCount > first);
  });
});
