// The parts of the config (docs/remote.md) that every layer reads: the LLM section, and the error a bad config
// raises (the CLI and the editor show its message as it stands).

export interface LlmConfig {
  model?: string;
  baseURL?: string;
  maxConcurrency?: number;
  timeoutS?: number;
  /** Stream answers (default true); some gateways only do plain responses. */
  stream?: boolean;
  maxRetries?: number;
  temperature?: number;
  maxTokens?: number;
  /** USD per million tokens, by model name prefix, over the built-in table (src/engine/llm/usage.ts). */
  prices?: Record<string, { inputPerMTok: number; outputPerMTok: number }>;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
