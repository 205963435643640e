import { describe, expect, it } from 'vitest';
import { costOf, priceOf, UsageMeter } from '../../src/engine/llm/usage';

describe('LLM usage and cost', () => {
  it('prices a model by its longest matching family name', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
    expect(priceOf('gpt-4o-2024-08-06')).toEqual({ inputPerMTok: 2.5, outputPerMTok: 10 });
    expect(priceOf('openai/gpt-4.1-mini')).toEqual({ inputPerMTok: 0.4, outputPerMTok: 1.6 });
    expect(priceOf('gpt-4omega')).toBeUndefined();
    expect(priceOf('qwen2.5-coder:32b')).toBeUndefined();
  });

  it('computes cost from tokens', () => {
    expect(costOf('gpt-4o', 1_000_000, 100_000)).toBeCloseTo(2.5 + 1.0, 10);
    expect(costOf('llama3', 1000, 1000)).toBeUndefined();
  });

  it('sums a run; an unknown model leaves the total cost out but counts its tokens', () => {
    const m = new UsageMeter();
    expect(m.add('gpt-4o-mini', 2000, 500)).toEqual({ promptTokens: 2000, completionTokens: 500, costUsd: (2000 * 0.15 + 500 * 0.6) / 1e6 });
    expect(m.totals().costUsd).toBeCloseTo(0.0006, 12);
    expect(m.add('my-local-model', 100, 10)).toEqual({ promptTokens: 100, completionTokens: 10 });
    expect(m.totals()).toEqual({ promptTokens: 2100, completionTokens: 510, calls: 2 });
  });

  it('takes user prices over the table', () => {
    const m = new UsageMeter({ 'my-local-model': { inputPerMTok: 1, outputPerMTok: 2 } });
    expect(m.add('my-local-model', 1e6, 1e6).costUsd).toBe(3);
  });
});
