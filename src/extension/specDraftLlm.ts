// Refines a drafted spec with the configured LLM: it sees the whole source and the signature-based draft
// and answers with a corrected spec. The heuristic draft stays when the answer is not a usable spec.
import { parseSpecText } from '../engine/spec';
import type { LlmClient } from '../engine/llm/llmClient';
import type { SpecDraft } from './specDraft';

export async function refineSpecWithLlm(client: LlmClient, draft: SpecDraft, sourceName: string, sourceText: string, kernel: string,
  signal?: AbortSignal): Promise<SpecDraft & { refined: boolean; note?: string }> {
  const prompt = [
    `Write a KernelEvolve spec (a Python file) for the kernel \`${kernel}\` in \`${sourceName}\`.`,
    'A spec defines BACKEND, SOURCE (the source file name), KERNEL, SHAPES (list of dicts, include odd sizes),',
    'inputs(shape, seed) returning a tuple of fresh arguments, launch(k, *args) that runs the kernel on the loaded',
    'candidate k and returns its output(s), OUTPUTS (indices of pure output arguments), and optionally reference(*args),',
    'TOLERANCE, FLOPS(shape), BYTES(shape). Use how the file itself launches the kernel.',
    '', `Source (${sourceName}):`, '```', sourceText, '```', '', 'A draft to correct:', '```python', draft.text, '```',
    '', 'Answer with the complete spec in one ```python block.',
  ].join('\n');
  try {
    const answer = await client.complete([{ role: 'user', content: prompt }], signal);
    const m = /```(?:python|py)?\s*\n([\s\S]*?)```/.exec(answer.text);
    if (!m) return { ...draft, refined: false, note: 'the LLM answered without a code block' };
    const text = m[1].trimEnd() + '\n';
    const spec = parseSpecText(text, draft.fileName);
    if (spec.kernel !== kernel) return { ...draft, refined: false, note: `the LLM's spec names KERNEL ${spec.kernel}` };
    return { fileName: draft.fileName, text: `# Drafted by KernelEvolve with ${client.model}; review it before evolving.\n${text}`, refined: true };
  } catch (e) {
    return { ...draft, refined: false, note: (e as Error).message };
  }
}
