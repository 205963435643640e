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
import type { EngineEvent } from '../../src/engine/events';
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

describe('the llm operator in kernelevolve evolve', () => {
  it('sends its retry notices to the run\'s listener (the progress display), not to raw stderr', async () => {
    const { createOperators } = await import('../../src/run/operatorRegistry');
    const { resolveRunSettings } = await import('../../src/run/runSettings');
    const { ScriptedLlmServer } = await import('../support/scriptedLlmServer');
    const server = new ScriptedLlmServer([{ kind: 'status', status: 429, retryAfter: '0.05' }, { kind: 'answer', content: 'No code.' }]);
    await server.start();
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = server.baseURL;
    process.env.OPENAI_API_KEY = 'k';
    const events: EngineEvent[] = [];
    const written: string[] = [];
    const write = process.stderr.write;
    try {
      const spec2: KernelSpec = { ...spec, specPath: path.resolve(__dirname, '../../examples/cpp/matmul_blocked/spec.py') };
      const [op] = await createOperators({ spec: spec2, config: {}, onEvent: (e) => events.push(e), workspaceDir: process.cwd(),
        settings: resolveRunSettings({ operators: ['llm'], model: 'gpt-4o-mini', jobTimeoutS: 60 }) });
      process.stderr.write = ((s: string) => (written.push(String(s)), true)) as typeof process.stderr.write;
      await op.propose({ spec: spec2, baselineSource: 'extern "C" void matmul() {}\n', candidates: [], seen: new Set() });
    } finally {
      process.stderr.write = write;
      process.env.OPENAI_BASE_URL = saved.url;
      process.env.OPENAI_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      await server.stop();
    }
    expect(events.some((e) => e.type === 'log' && /retrying/.test(e.message) && /429/.test(e.message))).toBe(true);
    expect(written.join('')).not.toMatch(/retrying/);
  });
});
