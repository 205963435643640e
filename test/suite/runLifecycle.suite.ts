/// <reference types="mocha" />
// A real run on the local host, stopped with the Stop command and continued with Resume, which picks the
// run up from the store without judging its candidates again.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { loadSpec } from '../../src/engine/spec';
import { DEFAULT_CONFIG } from '../../src/remote/hostConfig';
import { kernelEvolve, until, workspaceDir } from './extensionApi';

suite('Run lifecycle', () => {
  test('Stop ends a running run; Resume continues it from the run store', async () => {
    const api = await kernelEvolve();
    const spec = await loadSpec(path.join(workspaceDir(), 'matmul_blocked', 'spec.py'));
    const runId = await api.runs.start({ spec, settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 30 } });
    const judged = () => api.runs.get(runId)!.view.candidates.filter((c) => c.state === 'done').map((c) => c.id);
    await until('two judged candidates', () => judged().length >= 2, 180_000);
    await vscode.commands.executeCommand('kernelEvolve.stop', runId);
    assert.equal(api.runs.isActive(runId), false);
    assert.equal(api.runs.get(runId)!.view.status, 'stopped');
    const before = judged();

    await vscode.commands.executeCommand('kernelEvolve.resume', runId);
    assert.ok(api.runs.isActive(runId), 'the run is running again');
    assert.equal(api.runs.get(runId)!.view.status, 'running');
    await until('a new candidate judged after resuming', () => judged().some((id) => !before.includes(id)), 180_000);
    await vscode.commands.executeCommand('kernelEvolve.stop', runId);
    assert.equal(api.runs.get(runId)!.view.status, 'stopped');
    assert.ok(before.every((id) => judged().includes(id)), 'nothing judged before was lost');
  });
});
