/// <reference types="mocha" />
// Commands that talk to the hosts: Check Hosts on the local machine, and Profile Kernel at Cursor, which
// judges the kernel as it stands with the real harness and opens the report in an editor tab.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HostCheck } from '../../src/contract/hardware';
import type { Verdict } from '../../src/contract/verdict';
import { workspaceDir } from './extensionApi';

suite('Host commands', () => {
  test('Check Hosts reports the local host reachable, with its Python', async () => {
    const checks = await vscode.commands.executeCommand<HostCheck[]>('kernelEvolve.checkHosts');
    assert.ok(Array.isArray(checks), 'the command returns the checks');
    const local = checks.find((c) => c.host === 'local');
    assert.ok(local?.reachable, JSON.stringify(checks));
    assert.ok(Object.keys(local!.facts).length > 0, 'facts about the host');
    assert.ok(local!.facts['g++'] && local!.facts.torch, 'what each backend needs is checked (compiler, torch)');
  });

  test('Profile Kernel at Cursor judges the kernel and opens a profile report tab', async () => {
    const source = path.join(workspaceDir(), 'matmul_blocked', 'matmul.cpp');
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(source));
    const line = editor.document.getText().split('\n').findIndex((l) => l.includes('C[i] = 0.0f'));
    editor.selection = new vscode.Selection(line, 4, line, 4);
    const verdict = await vscode.commands.executeCommand<Verdict>('kernelEvolve.profileAtCursor');
    assert.equal(verdict?.status, 'ok', verdict?.reason);
    const report = vscode.window.activeTextEditor?.document;
    assert.equal(report?.uri.scheme, 'kernelevolve-report');
    assert.equal(report?.languageId, 'markdown');
    assert.match(report!.getText(), /^# matmul as it stands \(local\)/);
    assert.match(report!.getText(), /## Timings[\s\S]*## Profile[\s\S]*## Compile/);
  });
});
