// Spec drafting with the configured LLM, through the real openai client against a scripted server on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/engine/llm/llmClient';
import { refineSpecWithLlm } from '../../src/extension/specDraftLlm';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';

const SOURCE = 'extern "C" void saxpy(float a, const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] += a * x[i]; }\n';
const DRAFT = { fileName: 'saxpy_spec.py', text: 'BACKEND = "cpp"\nSOURCE = "saxpy.cpp"\nKERNEL = "saxpy"\nSHAPES = [{"n": 61}]\n\ndef inputs(shape, seed):\n    pass\n\ndef launch(k, *args):\n    pass\n' };
const BETTER = 'import numpy as np\nBACKEND = "cpp"\nSOURCE = "saxpy.cpp"\nKERNEL = "saxpy"\nSHAPES = [{"n": 1000003}]\nINPLACE = [2]\n\ndef inputs(shape, seed):\n    return (2.0, np.ones(shape["n"], np.float32), np.zeros(shape["n"], np.float32), shape["n"])\n\ndef launch(k, a, x, y, n):\n    k.saxpy(a, x.ctypes.data, y.ctypes.data, n)\n    return y\n';

let server: ScriptedLlmServer | undefined;
afterEach(async () => server?.stop());

async function refine(answer: string) {
  server = new ScriptedLlmServer([{ kind: 'answer', content: answer }]);
  const client = new LlmClient({ model: 'spec-writer', baseURL: await server.start(), apiKey: 'k', maxRetries: 0, timeoutS: 10 });
  return refineSpecWithLlm(client, DRAFT, 'saxpy.cpp', SOURCE, 'saxpy');
}

describe('refineSpecWithLlm', () => {
  it('takes the model\'s spec when it is a spec of this kernel, and shows the model the source and the draft', async () => {
    const out = await refine(`Here is the spec:\n\`\`\`python\n${BETTER}\`\`\`\n`);
    expect(out.refined).toBe(true);
    expect(out.text).toContain('SHAPES = [{"n": 1000003}]');
    expect(out.text).toMatch(/^# Drafted by KernelEvolve with spec-writer/);
    const prompt = server!.userPrompt(0);
    expect(prompt).toContain(SOURCE.trim());
    expect(prompt).toContain('SHAPES = [{"n": 61}]');
  });

  it('keeps the signature draft, with the reason, when the answer is not a usable spec', async () => {
    const out = await refine('```python\nKERNEL = "other"\n```');
    expect(out.refined).toBe(false);
    expect(out.text).toBe(DRAFT.text);
    expect(out.note).toMatch(/does not define BACKEND, SOURCE/);
  });
});
