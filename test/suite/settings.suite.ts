/// <reference types="mocha" />
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { readSettings } from '../../src/extension/settings';

suite('Settings', () => {
  const config = () => vscode.workspace.getConfiguration('kernelEvolve');
  teardown(async () => {
    await config().update('hosts', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('operators', undefined, vscode.ConfigurationTarget.Workspace);
  });

  test('an empty host list means the local machine', () => {
    const s = readSettings();
    assert.deepEqual(s.config.hosts.map((h) => h.type), ['local']);
  });

  test('a broken host entry is reported with the field and what to write', async () => {
    await config().update('hosts', [{ name: 'gpu', type: 'sshh' }, { name: 'gpu', type: 'ssh' }], vscode.ConfigurationTarget.Workspace);
    assert.throws(() => readSettings(), (e: Error) => {
      assert.match(e.message, /kernelEvolve\.hosts has 3 problem/);
      assert.match(e.message, /hosts\[0\]\.type is "sshh"; use "local", "ssh" or "slurm"/);
      assert.match(e.message, /hosts\[1\]: the name "gpu" is used twice/);
      assert.match(e.message, /hosts\[1\] is an ssh host and needs "host"/);
      return true;
    });
  });

  test('an unknown operator is refused by name', async () => {
    await config().update('operators', ['tune', 'magic'], vscode.ConfigurationTarget.Workspace);
    assert.throws(() => readSettings(), /"magic", which are not known; use any of tune, llm/);
  });
});
