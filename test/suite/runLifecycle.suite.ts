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
  test('Stop ends a running run after confirming its leaders; Resume continues it; a second Stop ends it at once', async () => {
    const api = await kernelEvolve();
    const spec = await loadSpec(path.join(workspaceDir(), 'matmul_blocked', 'spec.py'));
    const runId = await api.runs.start({ spec, settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 30 } });
    const judged = () => api.runs.get(runId)!.view.candidates.filter((c) => c.state === 'done').map((c) => c.id);
    await until('two judged candidates', () => judged().length >= 2, 180_000);
    await vscode.commands.executeCommand('kernelEvolve.stop', runId);
    assert.equal(api.runs.isActive(runId), false);
    assert.equal(api.runs.get(runId)!.view.status, 'stopped');
    assert.ok(!api.runs.get(runId)!.view.confirming, 'no longer confirming once stopped');
    // The first Stop let the engine judge the leaders once more: every candidate that beat the baseline is marked.
    const run = api.runs.get(runId)!;
    const baseScore = run.baseline?.score ?? 1;
    const leaders = [...run.candidates.values()].filter((c) => c !== run.baseline && c.verdict?.status === 'ok' && (c.score ?? 0) > baseScore);
    if (leaders.length) assert.ok(run.view.candidates.some((r) => r.confirmation), 'a leader was confirmed after Stop');
    const before = judged();

    await vscode.commands.executeCommand('kernelEvolve.resume', runId);
    assert.ok(api.runs.isActive(runId), 'the run is running again');
    assert.equal(api.runs.get(runId)!.view.status, 'running');
    await until('a new candidate judged after resuming', () => judged().some((id) => !before.includes(id)), 180_000);
    // The first Stop confirms the leaders (the panel says so); a second one ends the run at once.
    const first = vscode.commands.executeCommand('kernelEvolve.stop', runId);
    await until('the run says it is confirming the leaders', () => api.runs.get(runId)!.view.confirming === true, 10_000);
    await vscode.commands.executeCommand('kernelEvolve.stop', runId);
    await first;
    assert.equal(api.runs.isActive(runId), false);
    assert.equal(api.runs.get(runId)!.view.status, 'stopped');
    assert.ok(!api.runs.get(runId)!.view.confirming);
    assert.ok(before.every((id) => judged().includes(id)), 'nothing judged before was lost');
  });
});
