/// <reference types="mocha" />
// A kernel without a spec: Evolve drafts one next to the source, opens it for review and starts no run;
// the draft is a spec the real harness accepts.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { kernelEvolve, until, workspaceDir } from './extensionApi';

const SAXPY = `// y = a * x + y
extern "C" void saxpy(float a, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
`;

suite('Spec drafting', () => {
  test('Evolve on a kernel without a spec drafts one beside it and opens it before any run', async () => {
    const api = await kernelEvolve();
    const dir = path.join(workspaceDir(), 'drafted');
    mkdirSync(dir, { recursive: true });
    const source = path.join(dir, 'saxpy.cpp');
    writeFileSync(source, SAXPY);
    const runsBefore = api.runs.headers().length;
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(source));
    editor.selection = new vscode.Selection(2, 10, 2, 10);
    await vscode.commands.executeCommand('kernelEvolve.evolveAtCursor');
    const specPath = path.join(dir, 'saxpy_spec.py');
    await until('the drafted spec', () => existsSync(specPath));
    await until('the spec to open', () => vscode.window.activeTextEditor?.document.uri.fsPath === specPath);
    const text = readFileSync(specPath, 'utf8');
    assert.match(text, /^BACKEND = "cpp"$/m);
    assert.match(text, /^SOURCE = "saxpy.cpp"$/m);
    assert.match(text, /^KERNEL = "saxpy"$/m);
    assert.match(text, /^INPLACE = \[2\]$/m);
    assert.equal(api.runs.headers().length, runsBefore, 'no run may start before the spec is reviewed');

    // The draft is usable as it stands: the harness judges the kernel against itself.
    const harness = path.join(vscode.extensions.getExtension('kernelevolve.kernelevolve')!.extensionPath, 'harness');
    const r = spawnSync(process.env.KERNELEVOLVE_PYTHON || 'python3', ['-m', 'kernelevolve_harness', 'evaluate', '--spec', specPath, '--candidate', source, '--json'],
      { env: { ...process.env, PYTHONPATH: harness }, encoding: 'utf8', timeout: 120_000 });
    assert.ok(r.stdout.trim(), `the harness printed no verdict: ${r.stderr}`);
    const verdict = JSON.parse(r.stdout) as { status: string; reason: string };
    assert.equal(verdict.status, 'ok', verdict.reason);
  });
});
