/// <reference types="mocha" />
// Starting from a numpy operator in the editor: the lens over it, the problem drafted for review (inputs from
// its call site), what the command says without an LLM, then with the scripted OpenAI-compatible server: a
// run that drafts ModelNew kernels on the local host, and Accept writing the kernel file next to the module.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SCALED_RELU_KERNEL, scaledReluModule } from '../support/scaledReluOperator';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';
import { kernelEvolve, until, workspaceDir } from './extensionApi';

const MODULE = scaledReluModule(32, 200);

const KERNEL = SCALED_RELU_KERNEL;

async function setLlm(model: string | undefined, baseURL: string | undefined): Promise<void> {
  const c = vscode.workspace.getConfiguration('kernelEvolve');
  await c.update('llm.model', model, vscode.ConfigurationTarget.Workspace);
  await c.update('llm.baseURL', baseURL, vscode.ConfigurationTarget.Workspace);
}

suite('Write a kernel for a PyTorch or numpy operator', () => {
  const dir = () => path.join(workspaceDir(), 'ops');
  const modulePath = () => path.join(dir(), 'mylib.py');
  const problemPath = () => path.join(dir(), 'mylib_scaled_relu_problem.py');

  test('the lens is over the operator; without an LLM the problem is drafted for review and no run starts', async () => {
    const api = await kernelEvolve();
    mkdirSync(dir(), { recursive: true });
    writeFileSync(modulePath(), MODULE);
    const doc = await vscode.workspace.openTextDocument(modulePath());
    await vscode.window.showTextDocument(doc);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    const write = lenses.filter((l) => l.command?.command === 'kernelEvolve.writeKernel');
    // over scaled_relu; not over demo, which only makes random inputs
    assert.deepEqual(write.map((l) => l.range.start.line), [3]);
    await setLlm(undefined, undefined);
    const runsBefore = api.runs.headers().length;
    const drafted = await vscode.commands.executeCommand<string>('kernelEvolve.writeKernel', doc.uri, 4);
    assert.equal(drafted, problemPath());
    await until('the problem to open', () => vscode.window.activeTextEditor?.document.uri.fsPath === problemPath());
    const text = readFileSync(problemPath(), 'utf8');
    assert.match(text, /^class Model:$/m);
    assert.match(text, /^SHAPES = \[\{"n1": 32, "n2": 200\}, \{"n1": 31, "n2": 199\}\]$/m);
    assert.equal(api.runs.headers().length, runsBefore, 'no run without an LLM');
  });

  test('with an LLM, the problem evolves and Accept writes the kernel next to the module and makes the operator call it', async () => {
    const api = await kernelEvolve();
    const server = new ScriptedLlmServer([{ kind: 'answer', content: `Rationale: one fused loop.\n\n\`\`\`python\n${KERNEL}\`\`\`\n` }],
      { fallback: { kind: 'answer', content: 'Nothing better.' } });
    await server.start();
    try {
      await setLlm('scripted', server.baseURL);
      const c = vscode.workspace.getConfiguration('kernelEvolve');
      await c.update('budget.candidates', 2, vscode.ConfigurationTarget.Workspace);
      await c.update('operators', ['llm'], vscode.ConfigurationTarget.Workspace);
      const runId = await vscode.commands.executeCommand<string>('kernelEvolve.evolveProblem', vscode.Uri.file(problemPath()));
      assert.ok(runId, 'Evolve this problem started no run');
      await until('the run to end', () => api.runs.get(runId)!.view.status !== 'running', 240_000);
      const run = api.runs.get(runId)!;
      const winner = run.view.candidates.find((x) => x.id !== 'c0000' && x.status === 'ok');
      assert.ok(winner, `no correct kernel: ${JSON.stringify(run.view.candidates.map((x) => [x.id, x.status, x.reason]))}`);
      assert.ok(server.requests.length >= 1);
      assert.match(String(server.requests[0].body.messages[0].content), /CPP_SOURCE/);

      let settled = false;
      const accepting = Promise.resolve(vscode.commands.executeCommand('kernelEvolve.acceptCandidate', runId, winner.id)).finally(() => { settled = true; });
      // Accept asks whether to keep a fallback: take the first answer ("Call the kernel") once the pick is shown
      for (let i = 0; i < 60 && !settled; i++) {
        await new Promise((r) => setTimeout(r, 500));
        if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      }
      await accepting;
      const kernelFile = path.join(dir(), 'mylib_scaled_relu_kernel.py');
      await until('the kernel file', () => existsSync(kernelFile));
      assert.match(readFileSync(kernelFile, 'utf8'), /def scaled_relu_kernel\(x, w\):/);
      const module = readFileSync(modulePath(), 'utf8');
      assert.match(module, /from mylib_scaled_relu_kernel import scaled_relu_kernel/);
      assert.match(module, / {4}return scaled_relu_kernel\(x, w\)/);
      assert.doesNotMatch(module, /np\.maximum/, 'the body calls the kernel (no fallback was asked for)');
    } finally {
      await server.stop();
      await setLlm(undefined, undefined);
    }
  });
});
