// Token usage and cost of the LLM calls of one run. Cost comes from a small price table; for a model the
// table does not know (a local vLLM or Ollama model, an in-house gateway) only tokens are counted.

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Absent when the model's price is unknown. */
  costUsd?: number;
}

/** US dollars per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/**
 * List prices of common models (USD per million tokens, as the vendors published them in 2025). A model
 * matches the longest key that its name starts with, after any `provider/` prefix, so dated snapshots such
 * as `gpt-4o-mini-2024-07-18` find their family. Users override or extend it with config `llm.prices`.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2 },
  'gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  'gpt-4.1-nano': { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  'o3': { inputPerMTok: 2, outputPerMTok: 8 },
  'o3-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  'o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4 },
  'deepseek-chat': { inputPerMTok: 0.27, outputPerMTok: 1.1 },
  'deepseek-reasoner': { inputPerMTok: 0.55, outputPerMTok: 2.19 },
};

export function priceOf(model: string, prices: Readonly<Record<string, ModelPrice>> = DEFAULT_PRICES): ModelPrice | undefined {
  const name = model.toLowerCase().replace(/^.*\//, '');
  let best: string | undefined;
  for (const key of Object.keys(prices)) {
    const k = key.toLowerCase();
    if ((name === k || name.startsWith(k + '-') || name.startsWith(k + ':') || name.startsWith(k + '.')) && (!best || k.length > best.length)) best = key;
  }
  return best === undefined ? undefined : prices[best];
}

export function costOf(model: string, promptTokens: number, completionTokens: number,
  prices?: Readonly<Record<string, ModelPrice>>): number | undefined {
  const p = priceOf(model, prices);
  if (!p) return undefined;
  return (promptTokens * p.inputPerMTok + completionTokens * p.outputPerMTok) / 1e6;
}

/** The running totals of one run's LLM calls. */
export class UsageMeter {
  private prompt = 0;
  private completion = 0;
  private cost = 0;
  private priced = false;
  private unpriced = false;
  calls = 0;

  constructor(private readonly prices: Readonly<Record<string, ModelPrice>> = DEFAULT_PRICES) {}

  /** Records one call and returns its own usage (with its cost when the model's price is known). */
  add(model: string, promptTokens: number, completionTokens: number): TokenUsage {
    const costUsd = costOf(model, promptTokens, completionTokens, this.prices);
    this.prompt += promptTokens;
    this.completion += completionTokens;
    this.calls += 1;
    if (costUsd === undefined) this.unpriced = true;
    else {
      this.cost += costUsd;
      this.priced = true;
    }
    return { promptTokens, completionTokens, ...(costUsd === undefined ? {} : { costUsd }) };
  }

  /** Totals so far; the cost is given only when every call was priced. */
  totals(): TokenUsage & { calls: number } {
    return {
      promptTokens: this.prompt,
      completionTokens: this.completion,
      calls: this.calls,
      ...(this.priced && !this.unpriced ? { costUsd: this.cost } : {}),
    };
  }
}
