// The CLI and the editor start runs through the same startRun: given the same choices (the tuner, a budget of
// 2, the local host), `kernelevolve evolve` and the editor's engineRunner store the same resolved settings and
// hosts, with the defaults neither front end named (job timeout, policy) filled in the same way.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evolveCommand } from '../../src/cli/evolveCommand';
import { startEditorRun } from '../../src/extension/engineRunner';
import { DEFAULT_CONFIG } from '../../src/remote/hostConfig';
import { pipelineDepth, RUN_DEFAULTS } from '../../src/run/runSettings';

const ws = mkdtempSync(path.join(tmpdir(), 'ke-start-'));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

function kernel(name: string): string {
  const dir = path.join(ws, name);
  cpSync(path.resolve('examples/cpp/matmul_blocked'), dir, { recursive: true, filter: (src) => !src.includes('candidates') });
  return path.join(dir, 'spec.py');
}

describe('startRun', () => {
  it('resolves the same settings for a run from the CLI and one from the editor', async () => {
    const cliOut = path.join(ws, 'cli-run');
    const stdout = process.stdout.write;
    let json = '';
    process.stdout.write = ((s: string) => ((json += s), true)) as typeof process.stdout.write;
    let code: number;
    try {
      code = await evolveCommand(['--spec', kernel('cli'), '--operators', 'tune', '--budget', '2', '--out', cliOut, '--json']);
    } finally {
      process.stdout.write = stdout;
    }
    expect([0, 1]).toContain(code);
    expect(JSON.parse(json).runDir).toBe(cliOut);
    const cliRecord = JSON.parse(readFileSync(path.join(cliOut, 'run.json'), 'utf8'));

    const editor = await startEditorRun({
      specPath: kernel('editor'),
      settings: { config: DEFAULT_CONFIG, operators: ['tune'], budget: 2 },
      storeRoot: path.join(ws, 'editor', '.kernelevolve', 'runs'),
      signal: new AbortController().signal,
      onEvent: () => undefined,
    });
    const summary = await editor.finished;
    expect(summary.runDir).toBe(editor.store.runDir);
    const editorRecord = JSON.parse(readFileSync(path.join(editor.store.runDir, 'run.json'), 'utf8'));

    expect(editorRecord.options).toEqual(cliRecord.options);
    expect(editorRecord.hosts).toEqual(cliRecord.hosts);
    expect(editor.plan.settings).toEqual(cliRecord.options);
    // The defaults the two used to fill in differently.
    expect(cliRecord.options).toMatchObject({ jobTimeoutS: RUN_DEFAULTS.jobTimeoutS, policy: 'greedy', operators: ['tune'], budget: 2, profile: false });
    expect(editor.plan.pipelineDepth).toBe(pipelineDepth(['tune'], editorRecord.hosts.reduce((n: number, h: { slots: number }) => n + h.slots, 0)));
    // Both judged the baseline and spent the budget the same way.
    expect(editorRecord.counters.used).toBe(cliRecord.counters.used);
    expect(editorRecord.baseline.status).toBe('ok');
    expect(cliRecord.baseline.status).toBe('ok');
  }, 240_000);
});
