import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSpecText, SpecError } from '../../src/engine/spec';
import { parseAnswer } from '../../src/engine/llm/answerParser';
import { buildPrompt } from '../../src/engine/llm/promptBuilder';

const ROOT = path.resolve(__dirname, '../..');
const PROBLEM = path.join(ROOT, 'examples/kernelbench/cpu/relu_scale.py');
const TEXT = readFileSync(PROBLEM, 'utf8');

describe('KernelBench-format problems as specs', () => {
  it('reads a numpy problem as its own spec and baseline, evolving ModelNew on the CPU', () => {
    const spec = parseSpecText(TEXT, PROBLEM);
    expect(spec).toEqual({ specPath: PROBLEM, backend: 'model-cpu', sourcePath: PROBLEM, kernel: 'ModelNew' });
  });

  it('reads a torch problem as a GPU problem', () => {
    const text = 'import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    pass\n\ndef get_inputs():\n    return []\n\ndef get_init_inputs():\n    return []\n';
    expect(parseSpecText(text, '/p/q.py').backend).toBe('model-cuda');
  });

  it('says which part a half-written problem lacks', () => {
    expect(() => parseSpecText('class Model:\n    pass\n\ndef get_inputs():\n    return []\n', '/p/bad.py'))
      .toThrow(SpecError);
    expect(() => parseSpecText('class Model:\n    pass\n\ndef get_inputs():\n    return []\n', '/p/bad.py'))
      .toThrow(/does not define get_init_inputs\(\)/);
  });

  it('takes a fenced whole file defining class ModelNew as the candidate', () => {
    const code = 'import numpy as np\n\nclass ModelNew:\n    def forward(self, x):\n        return x\n';
    const parsed = parseAnswer({ answer: `Rationale: r.\n\n\`\`\`python\n${code}\`\`\``, parentSource: TEXT, kernel: 'ModelNew', language: 'python' });
    expect(parsed.ok && parsed.form).toBe('file');
    expect(parsed.ok && parsed.source).toBe(code);
  });

  it('asks for a whole ModelNew file with C++ in CPP_SOURCE on a CPU problem', () => {
    const spec = parseSpecText(TEXT, PROBLEM);
    const [system, user] = buildPrompt({ mode: 'draft', spec, specText: TEXT, language: 'python', baselineSource: TEXT, candidates: [], notes: [], pastWins: [] });
    expect(system.content).toContain('CPP_SOURCE');
    expect(system.content).toContain('class ModelNew');
    expect(user.content).toContain('class Model:');
  });
});
