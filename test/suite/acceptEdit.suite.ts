/// <reference types="mocha" />
// Accept in a real editor, as inline edit tools do it: the variant goes into the editor as one edit shown as
// an inline diff, each change accepted or rejected on its own, nothing written to disk; one Undo takes it out
// and leaves the file clean, and the lens offers the variant again. After the user edited the file, the
// kernel is found again by name; a renamed kernel is refused and the file left alone.
import * as assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Candidate } from '../../src/engine/candidate';
import { RunStore } from '../../src/engine/runStore';
import { kernelEvolve, until, workspaceDir } from './extensionApi';

const BASE = `constexpr int TILE = 8;

extern "C" void scale(float* x, int n) {
  for (int i = 0; i < n; i += TILE) for (int j = i; j < i + TILE && j < n; ++j) x[j] *= 2.0f;
}
`;
const VARIANT = BASE.replace('TILE = 8', 'TILE = 64').replace('x[j] *= 2.0f;', 'x[j] += x[j];');

function candidate(id: string, source: string, speedup: number, parents: string[], interval?: [number, number]): Candidate {
  const at = Date.now();
  return {
    id, parents, operator: parents.length ? 'tune' : 'baseline', source, hash: id, state: 'done',
    verdict: { status: 'ok', reason: 'Correct on 3 shape(s) x 2 seeds.', speedup, ...(interval ? { speedup_interval: interval } : {}), host: 'local' },
    placement: { host: 'local' }, timings: { proposedAt: at, startedAt: at, finishedAt: at },
  };
}

suite('Accepting a variant', () => {
  let source: string;
  let runId: string;

  suiteSetup(async () => {
    const dir = path.join(workspaceDir(), 'accept');
    mkdirSync(dir, { recursive: true });
    source = path.join(dir, 'scale.cpp');
    writeFileSync(source, BASE);
    const specPath = path.join(dir, 'spec.py');
    writeFileSync(specPath, 'BACKEND = "cpp"\nSOURCE = "scale.cpp"\nKERNEL = "scale"\nSHAPES = [{"n": 100}]\ndef inputs(shape, seed):\n    pass\ndef launch(k, *args):\n    pass\n');
    const store = RunStore.create({ spec: { specPath, backend: 'cpp', sourcePath: source, kernel: 'scale' }, options: { budget: 2 }, hosts: [{ name: 'local', slots: 1 }], workspace: workspaceDir() });
    store.recordVerdict(candidate('c0000', BASE, 1, []));
    store.recordVerdict(candidate('c0001', VARIANT, 2.5, ['c0000'], [2.3, 2.7]));
    store.update({ status: 'finished', reason: 'budget', best: { id: 'c0001', speedup: 2.5, operator: 'tune', status: 'ok' } });
    runId = store.runId;
    const api = await kernelEvolve();
    await api.runs.loadStored();
    assert.ok(api.runs.get(runId), 'the stored run is listed');
  });

  test('the CodeLens offers the variant over the kernel', async () => {
    const doc = await vscode.workspace.openTextDocument(source);
    await vscode.window.showTextDocument(doc);
    let titles: string[] = [];
    await until('the variant lens', async () => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      titles = lenses.map((l) => l.command?.title ?? '');
      return titles.some((t) => /faster variant/.test(t));
    });
    assert.ok(titles.includes('$(rocket) 2.50x (2.30-2.70) faster variant (c0001) — Preview'), titles.join(' | '));
    assert.ok(titles.includes('Accept') && titles.includes('Dismiss'));
  });

  const lensTitles = async (uri: vscode.Uri) => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? []).map((l) => l.command?.title ?? '');

  test('Accept shows the variant as an inline diff; each change is accepted or rejected on its own; nothing is saved', async () => {
    const doc = await vscode.workspace.openTextDocument(source);
    const editor = await vscode.window.showTextDocument(doc);
    await editor.edit((e) => e.insert(new vscode.Position(0, 0), '// my notes\n#include <cstdio>\n\n'));
    const edited = doc.getText();
    await vscode.commands.executeCommand('kernelEvolve.acceptCandidate', runId, 'c0001');
    const after = doc.getText();
    assert.ok(after.startsWith('// my notes\n#include <cstdio>\n\n'), 'the user\'s lines stay');
    assert.equal(after.replace('// my notes\n#include <cstdio>\n\n', ''), VARIANT);
    assert.equal(readFileSync(source, 'utf8'), BASE, 'nothing is written to disk before the user saves');
    let titles: string[] = [];
    await until('the per-change lenses', async () => (titles = await lensTitles(doc.uri)).filter((t) => t === 'Accept (Ctrl+Shift+Y)').length === 2);
    assert.ok(titles.includes('KernelEvolve c0001 (2.50x (2.30-2.70)): Accept All') && titles.includes('Reject All'), titles.join(' | '));
    // Reject the first change (the TILE constant), accept the second (the kernel's body) with the key's command.
    await vscode.commands.executeCommand('kernelEvolve.rejectHunk', doc.uri, 0);
    assert.match(doc.getText(), /constexpr int TILE = 8;/);
    assert.match(doc.getText(), /x\[j\] \+= x\[j\];/);
    // The key acts in the focused editor: focus the file (Accept showed it again), the cursor in the change.
    const focused = await vscode.window.showTextDocument(doc);
    focused.selection = new vscode.Selection(doc.positionAt(doc.getText().indexOf('x[j] += x[j]')), doc.positionAt(doc.getText().indexOf('x[j] += x[j]')));
    await vscode.commands.executeCommand('kernelEvolve.acceptHunk');
    await until('the inline diff to close', async () => !(titles = await lensTitles(doc.uri)).some((t) => t === 'Accept (Ctrl+Shift+Y)' || t.endsWith(': Accept All')));
    // Its TILE change was rejected, so the variant is not all in the file: the lens still offers it.
    assert.ok(titles.includes('$(rocket) 2.50x (2.30-2.70) faster variant (c0001) — Preview'), titles.join(' | '));
    assert.equal(readFileSync(source, 'utf8'), BASE);
    // Undo the rejection, then the variant: the file reads as the user left it.
    await vscode.commands.executeCommand('undo');
    await vscode.commands.executeCommand('undo');
    assert.equal(doc.getText(), edited);
  });

  test('one Undo of an accepted variant leaves the file clean, and the lens offers the variant again', async () => {
    const doc = await vscode.workspace.openTextDocument(source);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    assert.equal(doc.isDirty, false);
    await vscode.commands.executeCommand('kernelEvolve.acceptCandidate', runId, 'c0001');
    assert.equal(doc.getText(), VARIANT);
    await until('the variant no longer offered while it is in the editor', async () => !(await lensTitles(doc.uri)).some((t) => /faster variant/.test(t)));
    await vscode.commands.executeCommand('kernelEvolve.acceptAllHunks', doc.uri);
    await vscode.commands.executeCommand('undo');
    assert.equal(doc.getText(), BASE);
    assert.equal(doc.isDirty, false, 'back to the saved text, the tab is clean');
    await until('the variant offered again', async () => (await lensTitles(doc.uri)).includes('$(rocket) 2.50x (2.30-2.70) faster variant (c0001) — Preview'));
    // Dismissed, it can still be offered again from the lens.
    await vscode.commands.executeCommand('kernelEvolve.dismissCandidate', runId, 'c0001');
    await until('the offer-again lens', async () => (await lensTitles(doc.uri)).includes('$(history) 2.50x (2.30-2.70) variant dismissed — Offer Again'));
    await vscode.commands.executeCommand('kernelEvolve.offerCandidateAgain', runId, 'c0001');
    await until('the variant offered after Offer Again', async () => (await lensTitles(doc.uri)).some((t) => /faster variant/.test(t)));
  });

  test('a candidate\'s profile report opens as markdown in a tab', async () => {
    await vscode.commands.executeCommand('kernelEvolve.showProfileReport', runId, 'c0001');
    const doc = vscode.window.activeTextEditor?.document;
    assert.equal(doc?.uri.scheme, 'kernelevolve-report');
    assert.match(doc!.getText(), /^# scale — c0001\n\nCandidate \*\*c0001\*\* by `tune` from c0000\./);
    assert.match(doc!.getText(), /\*\*ok\*\* — 2\.500x over the baseline/);
  });

  test('a renamed kernel is refused and the file is left as it is', async () => {
    const doc = await vscode.workspace.openTextDocument(source);
    const editor = await vscode.window.showTextDocument(doc);
    const full = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
    await editor.edit((e) => e.replace(full, BASE.replace('void scale', 'void scale2')));
    const before = doc.getText();
    await vscode.commands.executeCommand('kernelEvolve.acceptCandidate', runId, 'c0001');
    assert.equal(doc.getText(), before);
  });
});
