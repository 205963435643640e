// What `kernelevolve evolve` shows of the LLM's usage (the progress line, the closing summary, run.json), and
// how it hands SSH prompts to its hosts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evolveCommand } from '../../src/cli/evolveCommand';
import { EvolveProgress } from '../../src/cli/evolveProgress';
import { usageText } from '../../src/cli/evolveReport';
import { RunStore } from '../../src/engine/runStore';
import type { KernelSpec } from '../../src/engine/spec';

const spec: KernelSpec = { specPath: '/x/spec.py', backend: 'cpp', sourcePath: '/x/matmul.cpp', kernel: 'matmul' };

describe('LLM usage in kernelevolve evolve', () => {
  it('shows tokens and cost on the progress line as usage events arrive', () => {
    let text = '';
    const progress = new EvolveProgress({ write: (s: string) => ((text += s), true), isTTY: true });
    progress.listener({ type: 'usage', promptTokens: 9000, completionTokens: 1500, costUsd: 0.00225, at: 0 });
    progress.listener({ type: 'usage', promptTokens: 1000, completionTokens: 500, costUsd: 0.00045, at: 0 });
    expect(text).toContain('12.0k tokens $0.0027');
  });

  it('keeps the run\'s totals in run.json, and says when the cost is unknown', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-usage-'));
    try {
      const store = RunStore.create({ spec, options: {}, hosts: [], out: path.join(dir, 'run') });
      store.listener({ type: 'usage', promptTokens: 100, completionTokens: 20, costUsd: 0.001, at: 0 });
      store.listener({ type: 'usage', promptTokens: 50, completionTokens: 10, costUsd: 0.0005, at: 0 });
      const record = JSON.parse(fs.readFileSync(path.join(store.runDir, 'run.json'), 'utf8'));
      expect(record.usage).toEqual({ calls: 2, promptTokens: 150, completionTokens: 30, costUsd: 0.0015 });
      expect(usageText(record.usage)).toBe('LLM usage: 2 calls, 150 prompt + 30 completion tokens, $0.0015');
      store.listener({ type: 'usage', promptTokens: 1, completionTokens: 1, at: 0 });
      expect(store.current.usage?.costUsd).toBeUndefined();
      expect(usageText(store.current.usage)).toMatch(/cost unknown/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SSH prompts', () => {
  it('passes --accept-new-host-key to the hosts, not through the environment', async () => {
    delete process.env.KERNELEVOLVE_ACCEPT_NEW_HOST_KEY;
    await expect(evolveCommand(['--spec', '/nonexistent/spec.py', '--accept-new-host-key'])).rejects.toThrow();
    expect(process.env.KERNELEVOLVE_ACCEPT_NEW_HOST_KEY).toBeUndefined();
  });
});
