// A KernelBench-format problem (numpy, so it runs on this CPU) evolved by the bundled CLI: the real `openai`
// client against the scripted server, the real harness judging ModelNew files that call C++: a correct one and
// several wrong ones (a numpy call, zeros, half the rows, right for one shape only, a NaN, one that does not compile).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';
import { tempFolder } from '../support/tempFolders';

const ROOT = path.resolve(__dirname, '../..');
const PROBLEM = path.join(ROOT, 'examples/kernelbench/cpu/relu_scale.py');
const GOOD = readFileSync(path.join(ROOT, 'examples/kernelbench/cpu/candidates/relu_scale.py'), 'utf8');
const answer = (code: string, why: string) => `Rationale: ${why}\n\n\`\`\`python\n${code}\`\`\`\n`;
// Wrong ModelNew classes of our own, each marked so its verdict can be found whatever id it gets.
const mark = (what: string, code: string) => `# ${what}\n${code}`;
const CHEAT = mark('calls numpy', `import numpy as np


class ModelNew:
    def __init__(self, dim):
        self.weight = np.zeros(dim, dtype=np.float32)

    def forward(self, x):
        return np.maximum(x, 0) * self.weight
`);
const BODY = '(v > 0.0f ? v : 0.0f) * w[j]';
const WRONG: Record<string, { code: string; status: string; reason?: RegExp }> = {
  'calls numpy': { code: CHEAT, status: 'static_rejected', reason: /np\.maximum/ },
  zeros: { code: mark('zeros', GOOD.replace(BODY, '0.0f')), status: 'incorrect' },
  'half the rows': { code: mark('half the rows', GOOD.replace('i < rows;', 'i < rows / 2;')), status: 'incorrect' },
  'right for one shape only': { code: mark('right for one shape only', GOOD.replace('w[j]', 'w[j % 1000]')), status: 'incorrect', reason: /dim=4099/ },
  'a NaN': {
    code: mark('a NaN', GOOD.replace('#include <cstdint>', '#include <cstdint>\n#include <cmath>').replace(`${BODY};\n    }\n`, `${BODY};\n    }\n  out[rows * cols - 1] = NAN;\n`)),
    status: 'incorrect', reason: /NaN/,
  },
  'does not compile': { code: mark('does not compile', GOOD.replace(BODY, 'v +* w[j]')), status: 'compile_error' },
};

let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([
    ...Object.values(WRONG).map((w) => ({ kind: 'answer' as const, content: answer(w.code, 'a faster loop.') })),
    { kind: 'answer', content: answer(mark('correct', GOOD), 'one fused C++ loop over rows and columns.') },
  ], { fallback: { kind: 'answer', content: 'No better idea.' } });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe('kernelevolve evolve --spec problem.py (KernelBench format)', () => {
  it('drafts ModelNew files with the LLM; refuses the one that calls numpy, finds the wrong ones wrong, keeps the C++ one', async () => {
    const out = path.join(tempFolder('ke-kb-cli-'), 'run');
    const answers = Object.keys(WRONG).length + 1;
    const r = await runCli(cli, ['evolve', '--spec', PROBLEM, '--operators', 'llm', '--model', 'scripted', '--budget', String(answers + 1), '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' });
    // 0, or 1 when the C++ loop does not beat numpy on this busy machine: correctness is what this test is about
    expect([0, 1], r.stderr).toContain(r.code);
    const result = JSON.parse(r.stdout);
    expect(result.candidates).toBeGreaterThanOrEqual(answers + 1);
    const system = server.requests[0].body.messages[0].content as string;
    expect(system).toContain('CPP_SOURCE');
    expect(system).toContain('class ModelNew');
    const verdicts = readFileSync(path.join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // each candidate's first verdict (a leader judged once more adds a confirmation row after it), by its mark
    const byMark: Record<string, { status: string; reason: string }> = {};
    for (const v of verdicts.filter((x) => x.verdict && x.id !== 'c0000')) {
      const what = /^# (.+)$/m.exec(readFileSync(path.join(out, 'candidates', `${v.id}.py`), 'utf8'))?.[1];
      if (what && !byMark[what]) byMark[what] = v.verdict;
    }
    expect(Object.keys(byMark).sort()).toEqual([...Object.keys(WRONG), 'correct'].sort());
    for (const [what, w] of Object.entries(WRONG)) {
      expect(byMark[what].status, `${what}: ${byMark[what].reason}`).toBe(w.status);
      if (w.reason) expect(byMark[what].reason, what).toMatch(w.reason);
    }
    expect(byMark.correct.status, byMark.correct.reason).toBe('ok');
    expect(result.best.status).toBe('ok');
  });
});
